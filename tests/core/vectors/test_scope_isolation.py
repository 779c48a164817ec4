"""Vector search only ever looks at the candidates of the asking scope (SPEC §2.6)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import Yuji
from memory_core.recall.vector_port import VectorAsk
from memory_core.vectors.build import sync_index
from memory_core.vectors.embedder import Calibration
from memory_core.vectors.fake import FakeEmbedder
from memory_core.vectors.side_path import VectorSide
from memory_core.vectors.store import IndexRow, VectorIndex

from .helpers import add_memory

SCOPES = ("group:1", "group:2", "private:9")
NOW = datetime(2026, 11, 20, tzinfo=UTC)

rows_strategy = st.lists(st.sampled_from(SCOPES), min_size=0, max_size=40)


@given(rows_strategy, st.sets(st.integers(0, 60)), st.sampled_from(SCOPES))
def test_index_selects_only_candidates_of_the_scope(
    scopes: list[str], candidates: set[int], scope: str
) -> None:
    rows = tuple(IndexRow(i + 1, 1, s, "小明", "sha") for i, s in enumerate(scopes))
    index = VectorIndex("fake", 4, rows, np.ones((len(rows), 4), dtype=np.float32) / 2)
    positions = index.select(scope, candidates)
    chosen = {index.rows[p].memory_id for p in positions}
    assert all(index.rows[p].scope == scope for p in positions)
    assert chosen <= candidates
    # ...and nothing of the scope that was a candidate is left out.
    assert chosen == {r.memory_id for r in rows if r.scope == scope and r.memory_id in candidates}
    assert index.scores(positions, np.ones(4, dtype=np.float32) / 2).shape == (len(positions),)


@given(
    st.lists(st.tuples(st.sampled_from(SCOPES), st.sampled_from(("小明", "小红", "阿杰")))),
    st.lists(st.tuples(st.sampled_from(SCOPES), st.frozensets(st.integers(0, 30))), max_size=20),
    st.frozensets(st.sampled_from(("小明", "小红", "阿杰", "没人"))),
)
def test_repeated_selections_answer_each_question_afresh(
    rows_of: list[tuple[str, str]],
    asks: list[tuple[str, frozenset[int]]],
    subjects: frozenset[str],
) -> None:
    """`select` remembers its last answers: asking again (more often than it keeps),
    with other ids or another scope, must never return an answer meant for another
    question; `about` keeps exactly the rows about the subjects."""
    rows = tuple(IndexRow(i + 1, 1, s, who, "sha") for i, (s, who) in enumerate(rows_of))
    index = VectorIndex("fake", 4, rows, np.ones((len(rows), 4), dtype=np.float32) / 2)
    for scope, candidates in asks * 2:
        positions = index.select(scope, candidates)
        assert [index.rows[p].memory_id for p in positions] == [
            r.memory_id for r in rows if r.scope == scope and r.memory_id in candidates
        ]
        about = index.about(positions, subjects)
        assert [index.rows[p].memory_id for p in about] == [
            index.rows[p].memory_id for p in positions if index.rows[p].subject in subjects
        ]


@pytest.fixture
async def world(core: Yuji) -> tuple[VectorSide, dict[str, list[int]]]:
    """The same memories in every scope, so another scope's copy always scores as high."""
    ids: dict[str, list[int]] = {s: [] for s in SCOPES}
    for scope in SCOPES:
        for content in ("小明从九月开始学吉他", "小明的猫叫团子", "小明芒果过敏", "小明在深圳上班"):
            ids[scope].append(await add_memory(core.db, scope, "小明", content))
    embedder = FakeEmbedder(calibration=Calibration(threshold=-1.0, margin=0.0))
    await sync_index(core.db, embedder, core.settings.vectors_dir)
    side = VectorSide(
        core.settings.with_changes(vector_mode="candidate"), core.db, embedder=embedder
    )
    return side, ids


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    scope=st.sampled_from(SCOPES),
    picks=st.lists(st.integers(0, 11), max_size=12),
    question=st.sampled_from(["小明学的什么乐器", "小明在哪上班", "我对什么过敏", "小明的猫叫啥"]),
)
async def test_vector_search_never_leaves_the_scope(
    world: tuple[VectorSide, dict[str, list[int]]], scope: str, picks: list[int], question: str
) -> None:
    side, ids = world
    every = [i for s in SCOPES for i in ids[s]]
    candidates = {every[p] for p in picks}
    found = await side.candidates(scope, question, candidates)
    assert {s.memory_id for s in found.scored} <= candidates & set(ids[scope])
    guess = await side.guess(VectorAsk(scope, question, candidates))
    if guess is not None:
        assert guess.memory_id in candidates & set(ids[scope])


async def test_other_scopes_are_invisible_even_when_passed(
    world: tuple[VectorSide, dict[str, list[int]]],
) -> None:
    side, ids = world
    others = set(ids["group:2"]) | set(ids["private:9"])
    assert (await side.candidates("group:1", "小明学的什么乐器", others)).scored == ()
    assert await side.guess(VectorAsk("group:1", "小明学的什么乐器", others)) is None
