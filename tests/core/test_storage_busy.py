"""Two processes writing one SQLite file: the second writer gets its turn within the
busy timeout even while the first writes back to back, and when it cannot (a
transaction held open), it fails with one clear line, never a traceback."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory_core.cli import main
from memory_core.errors import StorageBusy
from memory_core.storage.engine import Database

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
