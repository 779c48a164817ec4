"""Shadow mode computes and logs the guess but injects nothing; candidate injects it,
labelled. Both through the real recall path (core.recall)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_core import NewExperience, Settings, Yuji
from memory_core.recall.vector_port import VECTOR_LABEL
from memory_core.types import EvidenceRef
from memory_core.vectors.build import sync_index
from memory_core.vectors.embedder import Calibration
from memory_core.vectors.fake import FakeEmbedder

G = "group:1"
SENT = datetime(2026, 11, 6, 12, 0, tzinfo=UTC)
QUESTION = "老周家那桩好事成了没"
PINNED = {
    "家那桩好事成了没": [1.0, 0.0, 0.0, 0.0],
    "儿子出生，七斤二两": [0.9, 0.3, 0.0, 0.0],
    "最爱卡坦岛": [0.0, 0.0, 1.0, 0.0],
    "报喜 昨晚儿子出生了": [0.9, 0.2, 0.1, 0.0],
    "卡坦岛我玩了十年": [0.0, 0.1, 1.0, 0.0],
}


async def open_with(settings: Settings, mode: str) -> tuple[Yuji, int]:
    embedder = FakeEmbedder(dim=4, pinned=PINNED, calibration=Calibration(0.3, 0.02))
    core = await Yuji.open(settings.with_changes(vector_mode=mode), embedder=embedder)
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
    await sync_index(core.db, core.vectors.embedder, core.settings.vectors_dir)
    return core, ids[0]


@pytest.mark.parametrize("mode", ["shadow", "candidate"])
async def test_shadow_injects_nothing_candidate_injects_one_labelled_guess(
    settings: Settings, mode: str
) -> None:
    core, birth = await open_with(settings, mode)
    try:
        result = await core.recall.recall(G, QUESTION)
        assert core.vectors is not None
        decision = core.vectors.last_decision
        # The side path was consulted and would have guessed in both modes...
        assert decision is not None
        assert decision.guess is not None
        assert decision.guess.memory_id == birth
        if mode == "shadow":
            # ...but shadow injects nothing at all.
            assert result.items == ()
        else:
            assert [(r.memory.id, r.stage, r.reason) for r in result.items] == [
                (birth, "vector", VECTOR_LABEL)
            ]
    finally:
        await core.close()


async def test_switching_mode_changes_configuration_not_data(settings: Settings) -> None:
    core, birth = await open_with(settings, "shadow")
    try:
        assert core.vectors is not None
        assert (await core.recall.recall(G, QUESTION)).items == ()
        core.vectors.set_mode("candidate")
        items = (await core.recall.recall(G, QUESTION)).items
        assert [r.memory.id for r in items] == [birth]
        core.vectors.set_mode("shadow")
        assert (await core.recall.recall(G, QUESTION)).items == ()
    finally:
        await core.close()
