"""Dense retrieval only ever looks at the candidates of the asking scope (docs/design.md#recall),
and recall with dense on never returns another chat's memory."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import Yuji
from memory_core.recall.engine import Recall
from memory_core.vectors.build import sync_index
from memory_core.vectors.dense import Dense
from memory_core.vectors.store import IndexRow, VectorIndex
from tests.core.relevance_models import LEXICAL_MODEL, hand_model

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
    assert index.scores(positions, np.full(4, 0.5, dtype=np.float32)).shape == (len(positions),)


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
async def world(core: Yuji) -> tuple[Dense, dict[str, list[int]]]:
    """The same memories in every scope, so another scope's copy always scores as high."""
    ids: dict[str, list[int]] = {s: [] for s in SCOPES}
    for scope in SCOPES:
        for content in ("小明从九月开始学吉他", "小明的猫叫团子", "小明芒果过敏", "小明在深圳上班"):
            ids[scope].append(await add_memory(core.db, scope, "小明", content))
    assert core.vectors is not None  # conftest: dense on, FakeEmbedder
    await sync_index(core.memory_repo, core.vectors.embedder, core.vector_place)
    return core.vectors, ids


QUESTIONS = ["小明学的什么乐器", "小明在哪上班", "我对什么过敏", "小明的猫叫啥"]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    scope=st.sampled_from(SCOPES),
    picks=st.lists(st.integers(0, 11), max_size=12),
    question=st.sampled_from(QUESTIONS),
)
async def test_dense_search_never_leaves_the_scope(
    world: tuple[Dense, dict[str, list[int]]], scope: str, picks: list[int], question: str
) -> None:
    dense, ids = world
    every = [i for s in SCOPES for i in ids[s]]
    candidates = {every[p] for p in picks}
    found = await dense.scores(scope, question, candidates)
    got = set() if found is None else {int(i) for i in found.ids}
    assert got == candidates & set(ids[scope])


async def test_other_scopes_are_invisible_even_when_passed(
    world: tuple[Dense, dict[str, list[int]]],
) -> None:
    dense, ids = world
    others = set(ids["group:2"]) | set(ids["private:9"])
    assert await dense.scores("group:1", "小明学的什么乐器", others) is None


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(scope=st.sampled_from(SCOPES), question=st.sampled_from(QUESTIONS))
async def test_recall_with_dense_on_returns_only_the_asking_chats_memories(
    core: Yuji, world: tuple[Dense, dict[str, list[int]]], scope: str, question: str
) -> None:
    """A model that answers on cosine alone: whatever it picks is of the asking chat."""
    dense, ids = world
    recall = Recall(
        core.db,
        core.clock,
        core.live,
        repo=core.memory_repo,
        dense=dense,
        model=hand_model("fake", {"dense": 10.0}, bias=-2.0),
        lexical_model=LEXICAL_MODEL,
    )
    got = await recall.recall(scope, question, now=NOW)
    assert got.items  # the cosine model always answers here...
    assert {r.memory.id for r in got.items} <= set(ids[scope])  # ...from this chat only
