from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, inspect

from memory_core.storage import migrate
from memory_core.storage.engine import Database
from memory_core.storage.schema import metadata


@pytest.fixture
async def db(tmp_path: Path):
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")
    yield database
    await database.dispose()


async def test_upgrade_creates_every_table_and_reaches_head(db: Database) -> None:
    await migrate.upgrade(db)
    assert await migrate.current_revision(db) == migrate.head_revision()
    async with db.read() as conn:
        tables = set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
    assert set(metadata.tables) <= tables


async def test_upgrade_is_idempotent(db: Database) -> None:
    await migrate.upgrade(db)
    await migrate.upgrade(db)
    assert await migrate.current_revision(db) == migrate.head_revision()


async def test_migrations_match_the_schema_module(db: Database) -> None:
    await migrate.upgrade(db)

    def diff(conn: Connection) -> list[object]:
        context = MigrationContext.configure(
            conn,
            opts={
                "include_object": lambda obj, name, type_, reflected, compare_to: (
                    not (type_ == "table" and (name or "").startswith(("memory_fts", "alembic")))
                )
            },
        )
        return compare_metadata(context, metadata)

    async with db.read() as conn:
        assert await conn.run_sync(diff) == []


async def test_downgrade_to_base_and_up_again(db: Database) -> None:
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
    from memory_core.vectors import FakeEmbedder
    from tests.core.relevance_models import FAKE_MODEL, LEXICAL_MODEL

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

    again = await Yuji.open(
        Settings(data_dir=tmp_path),
        clock=FakeClock(core.clock.now()),
        embedder=FakeEmbedder(),
        relevance=FAKE_MODEL,
        lexical_relevance=LEXICAL_MODEL,
    )
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
