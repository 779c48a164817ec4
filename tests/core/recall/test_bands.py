"""Recall v3's contract: P ranks, the floor drops only noise and never a sure memory,
every injected memory is in a band, and a memory's P does not drift with the size of
its chat (no feature is normalised over the chat's other memories)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memory_core import Yuji
from memory_core.eval.generate import distractors
from memory_core.recall.ranking import Points
from memory_core.types import EvidenceRef, NewExperience

G1 = "group:1"
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(unit, unit, unit)
def test_the_floor_never_drops_a_sure_candidate(floor: float, sure: float, p: float) -> None:
    points = Points.of(floor, sure)
    band = points.band(p)
    assert points.floor <= points.sure
    if p >= sure:
        assert band == "sure"
    elif p >= floor:
        assert band == "related"
    else:
        assert band is None


@given(unit, unit, st.lists(unit, min_size=2, max_size=20))
def test_a_higher_p_is_never_in_a_lower_band(floor: float, sure: float, ps: list[float]) -> None:
    points = Points.of(floor, sure)
    rank = {None: 0, "related": 1, "sure": 2}
    ordered = sorted(ps)
    bands = [rank[points.band(p)] for p in ordered]
    assert bands == sorted(bands)


async def _write(core: Yuji, content: str, subject: str) -> int:
    exp = await core.archive.append(
        NewExperience(
            scope=G1, fingerprint=content, sender_id="1", text=content, sent_at=core.clock.now()
        )
    )
    out = await core.memories.write(
        G1,
        type="fact",
        subject=subject,
        content=content,
        evidence=[EvidenceRef(experience_id=exp)],
    )
    return out.memory.id


async def test_p_does_not_drift_when_the_chat_grows(core: Yuji) -> None:
    target = await _write(core, "小明从九月开始学吉他，每周六去琴行上课", "小明")
    near = await _write(core, "小明喜欢周末去爬山", "小明")
    question = "小明每周六去哪上课"

    async def p_of() -> dict[int, float]:
        ex = await core.recall.explain(G1, question, dense=False)
        p = core.recall.lexical_model.p(ex.rows)
        return {m.id: float(pi) for m, pi in zip(ex.memories, p, strict=True)}

    before = await p_of()
    exp = await core.archive.append(
        NewExperience(scope=G1, fingerprint="d", sender_id="1", text="d", sent_at=core.clock.now())
    )
    evidence = (EvidenceRef(experience_id=exp),)
    made = distractors(600, members=["小明", "阿杰", "老周"], chinese=True, seed=3)
    await core.memories.write_many(G1, [g.to_write(evidence) for g in made], changed_by="test")
    after = await p_of()
    for mid in (target, near):
        assert mid in before
        if mid in after:  # a candidate may be crowded out of the words' top; never moved
            assert np.isclose(after[mid], before[mid])
    assert target in after
