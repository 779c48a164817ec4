"""`yuji embed`'s work: stale and missing vectors are rebuilt, and deleting the
folder and rebuilding gives the same index, byte for byte."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from memory_core import Settings, Yuji
from memory_core.vectors.build import sync_index
from memory_core.vectors.fake import FakeEmbedder
from memory_core.vectors.store import model_folder

from .helpers import add_alias, add_evidence, add_memory, edit_memory, set_status

G1, G2 = "group:1", "group:2"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


async def test_incremental_index_equals_a_rebuild_from_nothing(core: Yuji) -> None:
    embedder = FakeEmbedder()
    place = core.vector_place
    a = await add_memory(core.db, G1, "小明", "小明从九月开始学吉他")
    b = await add_memory(core.db, G1, "老周", "老周儿子出生了")
    c = await add_memory(core.db, G2, "小明", "小明在深圳加班")
    first = await sync_index(core.memory_repo, embedder, place)
    assert (first.total, first.embedded, first.reused) == (3, 3, 0)

    # Nothing changed: nothing is embedded again.
    embedder.calls.clear()
    again = await sync_index(core.memory_repo, embedder, place)
    assert (again.embedded, again.reused) == (0, 3)
    assert embedder.calls == []

    # An edit (new version), a new memory, a retraction and a new alias.
    await edit_memory(core.db, a, "小明从九月开始学尤克里里")
    d = await add_memory(core.db, G2, "莉莉", "莉莉跳槽到上海")
    await set_status(core.db, c, "retracted")
    await add_alias(core.db, G1, "周哥", "老周")
    incremental = await sync_index(core.memory_repo, embedder, place)
    assert incremental.embedded == 2  # the edited memory and the new one
    assert incremental.dropped == 2  # the old version of a, and c
    index = await place.load(embedder.model_id)
    assert index is not None
    assert [(r.memory_id, r.version) for r in index.rows] == [(a, 2), (b, 1), (d, 1)]

    rebuilt = await sync_index(core.memory_repo, FakeEmbedder(), place, rebuild=True)
    assert rebuilt.embedded == 3
    again_index = await place.load(embedder.model_id)
    assert again_index is not None
    assert again_index.rows == index.rows
    np.testing.assert_array_equal(again_index.vectors, index.vectors)


@pytest.mark.sqlite_only("compares the index files byte for byte")
async def test_rebuild_flag_recomputes_everything_to_the_same_bytes(core: Yuji) -> None:
    embedder = FakeEmbedder()
    for i in range(5):
        await add_memory(core.db, G1, "小明", f"第{i}条：小明喜欢的东西{i}")
    await sync_index(core.memory_repo, embedder, core.vector_place)
    folder = model_folder(core.settings.vectors_dir, embedder.model_id)
    before = snapshot(folder)
    report = await sync_index(core.memory_repo, embedder, core.vector_place, rebuild=True)
    assert report.embedded == 5
    assert snapshot(folder) == before


async def test_a_new_nickname_does_not_embed_memories_again(core: Yuji) -> None:
    """Memories are embedded as written; nicknames are resolved in the question."""
    embedder = FakeEmbedder()
    await add_memory(core.db, G1, "小明", "大明说小明学吉他")
    await sync_index(core.memory_repo, embedder, core.vector_place)
    await add_alias(core.db, G1, "大明", "小明")
    report = await sync_index(core.memory_repo, embedder, core.vector_place)
    assert (report.embedded, report.reused) == (0, 1)


async def test_each_model_has_its_own_index(core: Yuji) -> None:
    await add_memory(core.db, G1, "小明", "小明学吉他")
    await sync_index(core.memory_repo, FakeEmbedder(model_id="one"), core.vector_place)
    await sync_index(core.memory_repo, FakeEmbedder(model_id="two", dim=16), core.vector_place)
    one = await core.vector_place.load("one")
    two = await core.vector_place.load("two")
    assert one is not None
    assert one.dim == 32
    assert two is not None
    assert two.dim == 16
    assert await core.vector_place.load("three") is None


@pytest.mark.sqlite_only("on PostgreSQL the vectors live in the database")
async def test_the_index_lives_outside_the_database(core: Yuji) -> None:
    await add_memory(core.db, G1, "小明", "小明学吉他")
    report = await sync_index(core.memory_repo, FakeEmbedder(), core.vector_place)
    folder = Path(report.folder)
    assert folder.is_relative_to(core.settings.data_dir / "vectors")
    assert any(name.endswith(".npy") for name in snapshot(folder))
    async with core.db.read() as conn:
        tables = {
            r[0] for r in (await conn.exec_driver_sql("SELECT name FROM sqlite_master")).all()
        }
    # Memory vectors never enter a SQLite database (PostgreSQL's table for them stays
    # empty); only recent chat's do, in their own table (message_vectors,
    # memory_core/vectors/messages.py), and none is there for a memory.
    assert {t for t in tables if "vector" in t} <= {
        "message_vectors",
        "ix_message_vectors_scope_experience_id",
        "memory_vectors",
        "vector_builds",
        "sqlite_autoindex_memory_vectors_1",
        "sqlite_autoindex_vector_builds_1",
    }
    async with core.db.read() as conn:
        for table in ("message_vectors", "memory_vectors", "vector_builds"):
            assert (await conn.exec_driver_sql(f"SELECT count(*) FROM {table}")).scalar() == 0


async def test_a_memory_vector_blends_its_text_with_its_evidence(core: Yuji) -> None:
    embedder = FakeEmbedder()
    memory = await add_memory(core.db, G1, "老周", "老周儿子出生")
    await sync_index(core.memory_repo, embedder, core.vector_place)
    alone = await core.vector_place.load(embedder.model_id)
    assert alone is not None

    await add_evidence(core.db, memory, G1, "报喜！昨晚老周家添了个大胖小子")
    report = await sync_index(core.memory_repo, embedder, core.vector_place)
    assert report.embedded == 1
    blended = await core.vector_place.load(embedder.model_id)
    assert blended is not None
    own = embedder.embed(["老周儿子出生"])[0]
    heard = embedder.embed(["报喜！昨晚老周家添了个大胖小子"])[0]
    expected = (own + heard) / np.linalg.norm(own + heard)
    np.testing.assert_allclose(blended.vectors[0], expected, atol=1e-6)
    assert not np.allclose(alone.vectors[0], blended.vectors[0])


async def test_processes_on_one_store_share_one_index(core: Yuji, settings: Settings) -> None:
    """What one process builds, another scores with (on PostgreSQL through the rows;
    on SQLite through the same data folder's file)."""
    await add_memory(core.db, G1, "小明", "小明学吉他")
    other = await Yuji.open(settings, embedder=FakeEmbedder())
    try:
        assert other.vectors is not None
        assert await other.vectors.index() is None
        await sync_index(core.memory_repo, FakeEmbedder(), core.vector_place)
        shared = None
        for _ in range(50):  # a reader looks again within place.TABLE_CHECK_S
            shared = await other.vectors.index()
            if shared is not None:
                break
            await asyncio.sleep(0.1)
        assert shared is not None
        assert [r.subject for r in shared.rows] == ["小明"]
    finally:
        await other.close()
