"""`yuji embed`'s work: stale and missing vectors are rebuilt, and deleting the
folder and rebuilding gives the same index, byte for byte."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from memory_core import Yuji
from memory_core.vectors.build import sync_index
from memory_core.vectors.fake import FakeEmbedder
from memory_core.vectors.store import VectorIndex, model_folder

from .helpers import add_alias, add_evidence, add_memory, edit_memory, set_status

G1, G2 = "group:1", "group:2"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


async def test_incremental_index_equals_a_rebuild_from_nothing(core: Yuji) -> None:
    embedder = FakeEmbedder()
    vectors_dir = core.settings.vectors_dir
    a = await add_memory(core.db, G1, "小明", "小明从九月开始学吉他")
    b = await add_memory(core.db, G1, "老周", "老周儿子出生了")
    c = await add_memory(core.db, G2, "小明", "小明在深圳加班")
    first = await sync_index(core.memory_repo, embedder, vectors_dir)
    assert (first.total, first.embedded, first.reused) == (3, 3, 0)

    # Nothing changed: nothing is embedded again.
    embedder.calls.clear()
    again = await sync_index(core.memory_repo, embedder, vectors_dir)
    assert (again.embedded, again.reused) == (0, 3)
    assert embedder.calls == []

    # An edit (new version), a new memory, a retraction and a new alias.
    await edit_memory(core.db, a, "小明从九月开始学尤克里里")
    d = await add_memory(core.db, G2, "莉莉", "莉莉跳槽到上海")
    await set_status(core.db, c, "retracted")
    await add_alias(core.db, G1, "周哥", "老周")
    incremental = await sync_index(core.memory_repo, embedder, vectors_dir)
    assert incremental.embedded == 2  # the edited memory and the new one
    assert incremental.dropped == 2  # the old version of a, and c
    folder = model_folder(vectors_dir, embedder.model_id)
    index = VectorIndex.load(folder, embedder.model_id)
    assert index is not None
    assert [(r.memory_id, r.version) for r in index.rows] == [(a, 2), (b, 1), (d, 1)]
    before = snapshot(folder)

    shutil.rmtree(vectors_dir)
    rebuilt = await sync_index(core.memory_repo, FakeEmbedder(), vectors_dir)
    assert rebuilt.embedded == 3
    assert snapshot(folder) == before


async def test_rebuild_flag_recomputes_everything_to_the_same_bytes(core: Yuji) -> None:
    embedder = FakeEmbedder()
    for i in range(5):
        await add_memory(core.db, G1, "小明", f"第{i}条：小明喜欢的东西{i}")
    await sync_index(core.memory_repo, embedder, core.settings.vectors_dir)
    folder = model_folder(core.settings.vectors_dir, embedder.model_id)
    before = snapshot(folder)
    report = await sync_index(core.memory_repo, embedder, core.settings.vectors_dir, rebuild=True)
    assert report.embedded == 5
    assert snapshot(folder) == before


async def test_a_new_nickname_does_not_embed_memories_again(core: Yuji) -> None:
    """Memories are embedded as written; nicknames are resolved in the question."""
    embedder = FakeEmbedder()
    await add_memory(core.db, G1, "小明", "大明说小明学吉他")
    await sync_index(core.memory_repo, embedder, core.settings.vectors_dir)
    await add_alias(core.db, G1, "大明", "小明")
    report = await sync_index(core.memory_repo, embedder, core.settings.vectors_dir)
    assert (report.embedded, report.reused) == (0, 1)


async def test_each_model_has_its_own_index(core: Yuji) -> None:
    await add_memory(core.db, G1, "小明", "小明学吉他")
    await sync_index(core.memory_repo, FakeEmbedder(model_id="one"), core.settings.vectors_dir)
    await sync_index(
        core.memory_repo, FakeEmbedder(model_id="two", dim=16), core.settings.vectors_dir
    )
    one = VectorIndex.load(model_folder(core.settings.vectors_dir, "one"), "one")
    two = VectorIndex.load(model_folder(core.settings.vectors_dir, "two"), "two")
    assert one is not None
    assert one.dim == 32
    assert two is not None
    assert two.dim == 16
    assert VectorIndex.load(model_folder(core.settings.vectors_dir, "one"), "two") is None


@pytest.mark.sqlite_only("on PostgreSQL the vectors live in the database")
async def test_the_index_lives_outside_the_database(core: Yuji) -> None:
    await add_memory(core.db, G1, "小明", "小明学吉他")
    report = await sync_index(core.memory_repo, FakeEmbedder(), core.settings.vectors_dir)
    folder = Path(report.folder)
    assert folder.is_relative_to(core.settings.data_dir / "vectors")
    assert any(name.endswith(".npy") for name in snapshot(folder))
    async with core.db.read() as conn:
        tables = {
            r[0] for r in (await conn.exec_driver_sql("SELECT name FROM sqlite_master")).all()
        }
    # Memory vectors never enter the database; only recent chat's do, in their own table
    # (message_vectors, memory_core/vectors/messages.py), and none is there for a memory.
    assert {t for t in tables if "vector" in t} <= {
        "message_vectors",
        "ix_message_vectors_scope_experience_id",
    }
    async with core.db.read() as conn:
        assert (await conn.exec_driver_sql("SELECT count(*) FROM message_vectors")).scalar() == 0


async def test_a_memory_vector_blends_its_text_with_its_evidence(core: Yuji) -> None:
    embedder = FakeEmbedder()
    memory = await add_memory(core.db, G1, "老周", "老周儿子出生")
    await sync_index(core.memory_repo, embedder, core.settings.vectors_dir)
    folder = model_folder(core.settings.vectors_dir, embedder.model_id)
    alone = VectorIndex.load(folder, embedder.model_id)
    assert alone is not None

    await add_evidence(core.db, memory, G1, "报喜！昨晚老周家添了个大胖小子")
    report = await sync_index(core.memory_repo, embedder, core.settings.vectors_dir)
    assert report.embedded == 1
    blended = VectorIndex.load(folder, embedder.model_id)
    assert blended is not None
    own = embedder.embed(["老周儿子出生"])[0]
    heard = embedder.embed(["报喜！昨晚老周家添了个大胖小子"])[0]
    expected = (own + heard) / np.linalg.norm(own + heard)
    np.testing.assert_allclose(blended.vectors[0], expected, atol=1e-6)
    assert not np.allclose(alone.vectors[0], blended.vectors[0])
