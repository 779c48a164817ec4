"""Two processes writing one SQLite file: the second writer gets its turn within the
busy timeout even while the first writes back to back, and when it cannot (a
transaction held open), it fails with one clear line, never a traceback."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from memory_core.cli import main
from memory_core.errors import StorageBusy
from memory_core.storage.engine import Database
from memory_core.storage.porting.redaction_repo import RedactionRepo

pytestmark = pytest.mark.sqlite_only("SQLite's file locks and busy timeout")

BUSY_WRITER = """
import asyncio, sys, time
from pathlib import Path
from memory_core.storage.engine import Database

async def main(path: str) -> None:
    db = Database(f"sqlite+aiosqlite:///{path}")
    stop, ready = Path(path + ".stop"), Path(path + ".ready")
    deadline = time.monotonic() + 60
    while not stop.exists() and time.monotonic() < deadline:
        async with db.write() as conn:  # back to back, as the bot archiving a burst
            await conn.exec_driver_sql("INSERT INTO t VALUES ('bot')")
            time.sleep(0.1)  # a long group commit, holding the write lock
        ready.touch()
    await db.dispose()

asyncio.run(main(sys.argv[1]))
"""


@pytest.fixture
async def busy_writer(tmp_path: Path) -> AsyncIterator[Path]:
    path = tmp_path / "busy.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (who TEXT)")
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", BUSY_WRITER, str(path))
    try:
        while not os.path.exists(f"{path}.ready"):  # noqa: ASYNC240 (a stat while polling)
            assert proc.returncode is None
            await asyncio.sleep(0.05)
        yield path
    finally:
        await asyncio.to_thread(Path(f"{path}.stop").touch)
        await asyncio.wait_for(proc.wait(), 60)


async def test_a_second_process_gets_its_turn_while_one_writes_back_to_back(
    busy_writer: Path,
) -> None:
    db = Database(f"sqlite+aiosqlite:///{busy_writer}", busy_timeout_s=5)
    try:
        for _ in range(3):
            async with db.write() as conn:
                await conn.exec_driver_sql("INSERT INTO t VALUES ('cli')")
    finally:
        await db.dispose()
    with sqlite3.connect(busy_writer) as conn:
        assert conn.execute("SELECT count(*) FROM t WHERE who = 'cli'").fetchone() == (3,)
        assert conn.execute("SELECT count(*) FROM t WHERE who = 'bot'").fetchone()[0] >= 1


async def test_a_write_lock_held_past_the_bound_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "held.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode=WAL")
    holder.execute("CREATE TABLE t (who TEXT)")
    holder.execute("BEGIN IMMEDIATE")
    db = Database(f"sqlite+aiosqlite:///{path}", busy_timeout_s=0.3)
    try:
        with pytest.raises(StorageBusy, match=r"another writer held the database for 0\.3 s"):
            async with db.write() as conn:
                await conn.exec_driver_sql("INSERT INTO t VALUES ('late')")
    finally:
        await db.dispose()
        holder.rollback()
        holder.close()


def test_cli_backup_against_a_held_write_lock_prints_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data"
    monkeypatch.setenv("YUJI_DATA_DIR", str(data))
    monkeypatch.setenv("YUJI_DB_BUSY_TIMEOUT_S", "0.3")
    assert main(["backup", "--json"]) == 0  # the database exists and is migrated
    capsys.readouterr()
    holder = sqlite3.connect(data / "yuji.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert main(["backup"]) == 2
    finally:
        holder.rollback()
        holder.close()
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("yuji backup: database busy: another writer held the database")


def _table(path: Path) -> sqlite3.Connection:
    """A WAL file with table t, and a second, real connection to it (autocommit)."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA journal_mode=WAL")
    other.execute("CREATE TABLE t (who TEXT)")
    return other


def _rows(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as conn:
        return [r[0] for r in conn.execute("SELECT who FROM t ORDER BY rowid")]


@pytest.mark.parametrize("holder_commits", [False, True])
async def test_a_lock_met_inside_a_deferred_transaction_is_storage_busy(
    tmp_path: Path, holder_commits: bool
) -> None:
    """Our deferred transaction reads; a real connection then takes the write lock
    (and holds it, or writes and commits); our write inside the transaction then
    fails (SQLITE_BUSY after the busy timeout, or SQLITE_BUSY_SNAPSHOT at once):
    StorageBusy, and nothing of ours was written."""
    path = tmp_path / "deferred.db"
    other = _table(path)
    db = Database(f"sqlite+aiosqlite:///{path}", busy_timeout_s=0.2)

    async def read_then_write() -> None:
        async with db.read() as conn:
            assert (await conn.exec_driver_sql("SELECT count(*) FROM t")).scalar() == 0
            other.execute("BEGIN IMMEDIATE")
            other.execute("INSERT INTO t VALUES ('other')")
            if holder_commits:
                other.execute("COMMIT")
            await conn.exec_driver_sql("INSERT INTO t VALUES ('ours')")

    try:
        with pytest.raises(StorageBusy, match="database busy"):
            await read_then_write()
        if not holder_commits:
            other.execute("COMMIT")
    finally:
        await db.dispose()
        other.close()
    assert _rows(path) == ["other"]


async def test_a_lock_met_at_commit_is_storage_busy_and_keeps_nothing(tmp_path: Path) -> None:
    """Where WAL is unavailable (SQLite falls back to a rollback journal) a reader's
    lock holds a commit back: our write transaction has written two rows, its COMMIT
    meets the reader after the busy timeout; StorageBusy, and neither row is kept."""
    path = tmp_path / "journal.db"
    with closing(sqlite3.connect(path)) as setup:
        setup.execute("CREATE TABLE t (who TEXT)")
        setup.commit()
    db = Database(f"sqlite+aiosqlite:///{path}", busy_timeout_s=0.2)

    def rollback_journal(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.execute("PRAGMA journal_mode=DELETE")

    event.listen(db.engine.sync_engine, "connect", rollback_journal)  # after WAL's pragma
    reader = sqlite3.connect(path, isolation_level=None)

    async def write_two_rows() -> None:
        async with db.write() as conn:
            await conn.exec_driver_sql("INSERT INTO t VALUES ('half')")
            await conn.exec_driver_sql("INSERT INTO t VALUES ('way')")

    try:
        async with db.write() as conn:  # our connection opens, in the rollback journal
            await conn.exec_driver_sql("INSERT INTO t VALUES ('first')")
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM t").fetchone()  # a shared lock, held
        with pytest.raises(StorageBusy, match=r"in the middle of this write; nothing of it"):
            await write_two_rows()
        reader.execute("COMMIT")
        async with db.write() as conn:  # the database is usable again
            await conn.exec_driver_sql("INSERT INTO t VALUES ('after')")
    finally:
        await db.dispose()
        reader.close()
    assert _rows(path) == ["first", "after"]


async def test_vacuum_against_a_held_write_lock_is_storage_busy(tmp_path: Path) -> None:
    path = tmp_path / "vacuum.db"
    other = _table(path)
    db = Database(f"sqlite+aiosqlite:///{path}", busy_timeout_s=0.2)
    try:
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(StorageBusy):
            await RedactionRepo(db).vacuum()
        other.execute("ROLLBACK")
        await RedactionRepo(db).vacuum()
    finally:
        await db.dispose()
        other.close()
