from __future__ import annotations

import importlib.util
import warnings
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, inspect

from memory_core.storage import migrate
from memory_core.storage.engine import Database
from memory_core.storage.porting.redaction_repo import TOMBSTONE
from memory_core.storage.schema import metadata
from tests.backends import admin
from tests.conftest import Servers


@pytest.fixture
async def db(tmp_path: Path):
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")
    yield database
    await database.dispose()


@pytest.fixture
async def empty(tmp_path: Path, backend: str, servers: Servers) -> AsyncIterator[Database]:
    """An empty database on each backend: no migration has run on it."""
    if backend == "sqlite":
        database = Database(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")
        yield database
        await database.dispose()
        return
    server, name = await servers.empty(backend)
    database = Database(server.url(name))
    yield database
    await database.dispose()
    await admin(server, f"DROP DATABASE {name} WITH (FORCE)")


async def test_upgrade_creates_every_table_and_reaches_head(empty: Database) -> None:
    db = empty
    await migrate.upgrade(db)
    assert await migrate.current_revision(db) == migrate.head_revision()
    async with db.read() as conn:
        tables = set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
    assert set(metadata.tables) <= tables


async def test_upgrade_is_idempotent(empty: Database) -> None:
    db = empty
    await migrate.upgrade(db)
    await migrate.upgrade(db)
    assert await migrate.current_revision(db) == migrate.head_revision()


async def test_migrations_match_the_schema_module(empty: Database) -> None:
    db = empty
    await migrate.upgrade(db)

    def diff(conn: Connection) -> list[object]:
        context = MigrationContext.configure(
            conn,
            opts={
                "include_object": lambda _obj, name, type_, _reflected, _compare_to: (
                    not (
                        type_ == "table"
                        and (name or "").startswith(
                            ("memory_fts", "message_fts", "fts_totals", "alembic")
                        )
                    )
                    # pgvector's copy of each vector, where the server has it (0020)
                    and not (type_ == "column" and name == "embedding")
                    and not (type_ == "index" and (name or "").startswith("ix_memory_vectors_hnsw"))
                )
            },
        )
        with warnings.catch_warnings():  # SQLAlchemy does not know pgvector's type
            warnings.filterwarnings("ignore", "Did not recognize type 'vector'")
            return compare_metadata(context, metadata)

    async with db.read() as conn:
        assert await conn.run_sync(diff) == []


async def test_downgrade_to_base_and_up_again(empty: Database) -> None:
    db = empty
    await migrate.upgrade(db)
    await migrate.downgrade(db, "base")
    async with db.read() as conn:
        tables = set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
    assert not (set(metadata.tables) & tables)
    await migrate.upgrade(db)
    assert await migrate.current_revision(db) == migrate.head_revision()


async def test_pragmas_are_set_on_every_connection(db: Database) -> None:
    await migrate.upgrade(db)
    async with db.read() as conn:
        mode = (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar()
        fks = (await conn.exec_driver_sql("PRAGMA foreign_keys")).scalar()
        busy = (await conn.exec_driver_sql("PRAGMA busy_timeout")).scalar()
    assert (mode, fks) == ("wal", 1)
    assert busy is not None
    assert busy >= 1000


async def test_0002_rebuilds_the_index_with_a_tokenizer_that_keeps_tokens_whole(
    tmp_path: Path,
) -> None:
    from sqlalchemy import text

    from memory_core import FakeClock, Settings, Yuji
    from memory_core.types import EvidenceRef, NewExperience
    from tests.core.cores import open_core

    core = await Yuji.open(Settings(data_dir=tmp_path))
    exp = await core.archive.append(
        NewExperience(
            scope="group:1", fingerprint="f", sender_id="1", text="t", sent_at=core.clock.now()
        )
    )
    written = await core.memories.write(
        "group:1",
        type="fact",
        subject="小明",
        content="小明在学吉他ᦰ",  # a combining mark unicode61 treats as a separator
        evidence=[EvidenceRef(experience_id=exp)],
    )
    await migrate.downgrade(core.db, "0001")
    async with core.db.read() as conn:
        old = (
            await conn.execute(text("SELECT sql FROM sqlite_master WHERE name='memory_fts'"))
        ).scalar()
    assert "unicode61" in str(old)
    await core.close()

    again = await open_core(Settings(data_dir=tmp_path), FakeClock(core.clock.now()))
    try:
        assert await migrate.current_revision(again.db) == migrate.head_revision()
        async with again.db.read() as conn:
            sql = (
                await conn.execute(text("SELECT sql FROM sqlite_master WHERE name='memory_fts'"))
            ).scalar()
            count = (await conn.execute(text("SELECT count(*) FROM memory_fts"))).scalar()
        assert "'ascii'" in str(sql)
        assert count == 1
        got = await again.recall.recall("group:1", "小明在学吉他吗")
        assert [r.memory.id for r in got.items] == [written.memory.id]
    finally:
        await again.close()


async def test_0010_keeps_one_timeline_entry_per_day_and_text(db: Database) -> None:
    """Upgrade collapses entries written twice (first row kept), the constraint then
    refuses a repeat; downgrade lets it in again, and upgrade collapses it again."""
    from sqlalchemy import insert, select

    from memory_core.errors import ConstraintViolation
    from memory_core.storage.schema import timeline

    at = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

    async def add(content: str, day: str = "2026-12-01") -> None:
        async with db.write() as conn:
            await conn.execute(
                insert(timeline).values(scope="group:1", day=day, content=content, created_at=at)
            )

    async def rows() -> list[tuple[int, str, str]]:
        async with db.read() as conn:
            found = await conn.execute(
                select(timeline.c.id, timeline.c.day, timeline.c.content).order_by(timeline.c.id)
            )
            return [(int(r.id), str(r.day), str(r.content)) for r in found]

    await migrate.upgrade(db, "0009")
    for content, day in [
        ("认识了", "2026-12-01"),
        ("认识了", "2026-12-01"),
        ("认识了", "2026-12-02"),
    ]:
        await add(content, day)
    await add("吵了一架")
    await add("认识了")
    await migrate.upgrade(db, "0010")
    assert await rows() == [
        (1, "2026-12-01", "认识了"),
        (3, "2026-12-02", "认识了"),
        (4, "2026-12-01", "吵了一架"),
    ]
    with pytest.raises(ConstraintViolation):
        await add("吵了一架")

    await migrate.downgrade(db, "0009")
    await add("吵了一架")
    assert len(await rows()) == 4
    await migrate.upgrade(db)
    assert [r[0] for r in await rows()] == [1, 3, 4]
    assert await migrate.current_revision(db) == migrate.head_revision()


async def test_0012_keeps_one_running_forget_request_per_person(db: Database) -> None:
    """Upgrade closes the later of two running requests of one person (the first stays
    running), the index then refuses another; downgrade lets it in, upgrade closes it."""
    from sqlalchemy import insert, select

    from memory_core.errors import ConstraintViolation
    from memory_core.storage.schema import forget_requests

    at = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    q = forget_requests.c

    async def add(user_id: str, state: str = "running") -> None:
        async with db.write() as conn:
            await conn.execute(
                insert(forget_requests).values(
                    scope="group:1",
                    user_id=user_id,
                    requested_by=user_id,
                    names=[user_id],
                    state=state,
                    created_at=at,
                )
            )

    async def states() -> list[tuple[int, str, str]]:
        async with db.read() as conn:
            found = await conn.execute(select(q.id, q.user_id, q.state).order_by(q.id))
            return [(int(r.id), str(r.user_id), str(r.state)) for r in found]

    await migrate.upgrade(db, "0011")
    for user_id in ("42", "42", "43"):
        await add(user_id)
    await add("42", "done")
    await migrate.upgrade(db, "0012")
    assert await states() == [
        (1, "42", "running"),
        (2, "42", "done"),
        (3, "43", "running"),
        (4, "42", "done"),
    ]
    with pytest.raises(ConstraintViolation):
        await add("42")
    await add("42", "done")  # only running requests are one a person

    await migrate.downgrade(db, "0011")
    await add("43")
    await migrate.upgrade(db)
    assert [s for _, u, s in await states() if u == "43"] == ["running", "done"]
    assert await migrate.current_revision(db) == migrate.head_revision()


async def test_0013_keeps_the_index_rows_and_drops_the_unigram_column(db: Database) -> None:
    """Upgrade keeps every row's `bi` under its rowid, searchable and counted by the
    vocabulary table, without `uni`; downgrade brings `uni` back (empty) and the rows."""
    from sqlalchemy import text

    async def index() -> tuple[str, list[tuple[int, str]], list[str]]:
        async with db.read() as conn:
            sql = (
                await conn.execute(text("SELECT sql FROM sqlite_master WHERE name='memory_fts'"))
            ).scalar()
            rows = await conn.execute(
                text("SELECT rowid, bi FROM memory_fts WHERE memory_fts MATCH 'bi : skey吉他'")
            )
            vocab = await conn.execute(text("SELECT term FROM memory_fts_vocab ORDER BY term"))
            return str(sql), [(int(r[0]), str(r[1])) for r in rows], [str(v[0]) for v in vocab]

    await migrate.upgrade(db, "0012")
    async with db.write() as conn:
        await conn.execute(
            text("INSERT INTO memory_fts(rowid, bi, uni) VALUES (7, 'skey吉他 skey学吉', 'skey吉')")
        )
    await migrate.upgrade(db, "0013")
    sql, rows, vocab = await index()
    assert "uni" not in sql
    assert "'ascii'" in sql
    assert rows == [(7, "skey吉他 skey学吉")]
    assert vocab == ["skey吉他", "skey学吉"]

    await migrate.downgrade(db, "0012")
    sql, rows, _ = await index()
    assert "uni" in sql
    assert rows == [(7, "skey吉他 skey学吉")]
    await migrate.upgrade(db)
    assert await migrate.current_revision(db) == migrate.head_revision()


def test_the_migrations_tombstone_is_the_one_redactions_write() -> None:
    """0005 (SQLite's trigger) and 0016 (PostgreSQL's) each keep their own copy of the
    text a redaction writes: a migration must not change with the code it shipped
    beside, but a trigger that expects other words refuses every redaction."""
    versions = Path(migrate.MIGRATIONS_DIR) / "versions"
    for name in ("0005_porting.py", "0016_postgres.py"):
        spec = importlib.util.spec_from_file_location(name[:-3], versions / name)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert module.TOMBSTONE == TOMBSTONE, name


async def test_0023_counts_the_recall_models_under_their_own_jobs(empty: Database) -> None:
    """After 0023 `embed` and `rerank` rows are accepted; downgrading removes them and
    refuses them again; upgrading accepts them again."""
    from memory_core.errors import ConstraintViolation
    from memory_core.storage import UsageRepo, UsageRow

    db = empty
    at = datetime(2026, 12, 6, 1, 0, tzinfo=UTC)

    async def record(job: str) -> None:
        await UsageRepo(db).record(UsageRow(at, job, "m", None, 10, 0, 0, 5, "ok"))

    await migrate.upgrade(db)
    await record("embed")
    await record("rerank")
    assert {t.job for t in await UsageRepo(db).totals(at)} == {"embed", "rerank"}
    await migrate.downgrade(db, "0021")
    assert await UsageRepo(db).totals(at) == []
    with pytest.raises(ConstraintViolation):
        await record("rerank")
    await migrate.upgrade(db)
    await record("rerank")
