"""Shadow mode computes dense retrieval and logs what it would inject but injects only
what the words alone choose; on injects the dense find. Both through the real recall
path (core.recall) with an index `sync_index` built."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_core import NewExperience, Settings, Yuji
from memory_core.recall.dense_port import background_texts
from memory_core.types import EvidenceRef, Recalled
from memory_core.vectors.build import sync_index
from memory_core.vectors.fake import FakeEmbedder
from tests.core.relevance_models import LEXICAL_MODEL, hand_model

G = "group:1"
SENT = datetime(2026, 11, 6, 12, 0, tzinfo=UTC)
QUESTION = "老周家那桩好事成了没"
PINNED = {
    QUESTION: [1.0, 0.0, 0.0, 0.0],
    "老周儿子出生，七斤二两": [0.9, 0.3, 0.0, 0.0],
    "报喜 昨晚儿子出生了": [0.9, 0.2, 0.1, 0.0],
    "老周最爱卡坦岛": [0.0, 0.0, 1.0, 0.0],
    "卡坦岛我玩了十年": [0.0, 0.1, 1.0, 0.0],
}
# P = sigmoid(8 * cosine - 6): the birth (cosine ~0.95) passes, the game (~0) does not.
DENSE_MODEL = hand_model("fake", {"dense": 8.0}, bias=-6.0)


def _by_dense(item: Recalled) -> bool:
    """The cosine chose it: its strongest reason is the dense feature and it is sure."""
    return item.band == "sure" and bool(item.why) and item.why[0][0] == "dense"


async def open_with(settings: Settings, mode: str) -> tuple[Yuji, FakeEmbedder, int]:
    embedder = FakeEmbedder(dim=4, pinned=PINNED)
    core = await Yuji.open(
        settings.with_changes(vector_mode=mode),
        embedder=embedder,
        relevance=DENSE_MODEL,
        lexical_relevance=LEXICAL_MODEL,
    )
    ids: list[int] = []
    for i, (content, heard) in enumerate(
        [("老周儿子出生，七斤二两", "报喜 昨晚儿子出生了"), ("老周最爱卡坦岛", "卡坦岛我玩了十年")]
    ):
        exp = await core.archive.append(
            NewExperience(scope=G, fingerprint=f"m{i}", sender_id="1", text=heard, sent_at=SENT)
        )
        out = await core.memories.write(
            G,
            type="event",
            subject="老周",
            content=content,
            evidence=[EvidenceRef(experience_id=exp)],
        )
        ids.append(out.memory.id)
    assert core.vectors is not None
    await sync_index(core.memory_repo, core.vectors.embedder, core.vector_place)
    return core, embedder, ids[0]


@pytest.mark.parametrize("mode", ["shadow", "on"])
async def test_shadow_computes_dense_and_injects_nothing_on_injects_it(
    settings: Settings, mode: str
) -> None:
    core, embedder, birth = await open_with(settings, mode)
    try:
        embedder.calls.clear()
        result = await core.recall.recall(G, QUESTION)
        # Dense retrieval ran in both modes (the question was embedded)...
        # (besides the fixed background, embedded once per process)
        assert [c for c in embedder.calls if c not in background_texts()] == [QUESTION]
        assert any(f"would inject: [{birth}" in line for line in result.trace) == (mode == "shadow")
        if mode == "shadow":
            # ...but shadow injects only what the words choose: the name finds both
            # memories as weak guesses (the hybrid's top is kept), the cosine none.
            assert not any(_by_dense(r) for r in result.items)
        else:
            # (the name brings it through the words too; the cosine is what decides)
            assert [(r.memory.id, r.why[0][0]) for r in result.items][:1] == [(birth, "dense")]
    finally:
        await core.close()


async def test_switching_mode_changes_configuration_not_data(settings: Settings) -> None:
    core, _, birth = await open_with(settings, "shadow")
    try:
        assert core.vectors is not None
        assert not any(_by_dense(r) for r in (await core.recall.recall(G, QUESTION)).items)
        core.vectors.set_mode("on")
        items = (await core.recall.recall(G, QUESTION)).items
        assert [r.memory.id for r in items][:1] == [birth]
        assert _by_dense(items[0])
        core.vectors.set_mode("shadow")
        assert not any(_by_dense(r) for r in (await core.recall.recall(G, QUESTION)).items)
    finally:
        await core.close()
