"""Pure parts of recall: the visibility rule and the final selection (P lifted a little
by importance and recency, MMR, restatements collapsed, contradictions paired)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.recall.ranking import (
    Candidate,
    Said,
    final_score,
    recency,
    restatement_groups,
    restates,
    select,
    swaps_content,
)
from memory_core.recall.visibility import is_retrospective, is_visible
from memory_core.types import Memory, MemoryStatus

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def mem(
    mid: int = 1,
    *,
    scope: str = "group:1",
    content: str = "小明在学吉他",
    status: MemoryStatus = "active",
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
    importance: float = 0.5,
    last_accessed_at: datetime | None = None,
    hit_count: int = 0,
    starred: bool = False,
) -> Memory:
    return Memory(
        id=mid,
        scope=scope,
        type="fact",
        subject="小明",
        content=content,
        importance=importance,
        confidence=0.8,
        status=status,
        valid_from=valid_from,
        valid_to=valid_to,
        version=1,
        origin="model",
        created_at=NOW - timedelta(days=10),
        updated_at=NOW - timedelta(days=10),
        last_accessed_at=last_accessed_at,
        hit_count=hit_count,
        pinned=False,
        starred=starred,
    )


# --- visibility -------------------------------------------------------------------------


def test_visibility_rule() -> None:
    past = NOW - timedelta(days=1)
    assert is_visible(mem(), "group:1", NOW)
    assert not is_visible(mem(), "group:2", NOW)
    assert not is_visible(mem(status="retracted"), "group:1", NOW, retrospective=True)
    assert not is_visible(mem(status="cold"), "group:1", NOW)
    assert is_visible(mem(status="cold"), "group:1", NOW, retrospective=True)
    assert not is_visible(mem(valid_to=past), "group:1", NOW)
    assert is_visible(mem(valid_to=past), "group:1", NOW, retrospective=True)
    assert not is_visible(
        mem(valid_from=NOW + timedelta(days=1)), "group:1", NOW, retrospective=True
    )


@given(
    scope=st.sampled_from(["group:1", "group:2", "private:3"]),
    status=st.sampled_from(["active", "retracted", "cold"]),
    retro=st.booleans(),
    ended=st.booleans(),
)
def test_visibility_is_fail_closed(
    scope: str, status: MemoryStatus, retro: bool, ended: bool
) -> None:
    m = mem(scope=scope, status=status, valid_to=NOW - timedelta(hours=1) if ended else None)
    seen = is_visible(m, "group:1", NOW, retrospective=retro)
    if seen:
        assert m.scope == "group:1"
        assert m.status != "retracted"
        assert retro or (m.status == "active" and not ended)


def test_retrospective_cues() -> None:
    assert is_retrospective("小明以前住哪")
    assert is_retrospective("原来的地址是什么")
    assert is_retrospective("What did she used to do?")
    assert not is_retrospective("小明现在住哪")


# --- ranking ------------------------------------------------------------------------------


def test_recency_decays_monotonically() -> None:
    values = [recency(mem(last_accessed_at=NOW - timedelta(days=d)), NOW) for d in (0, 10, 40, 400)]
    assert values == sorted(values, reverse=True)
    assert recency(mem(), NOW) == 0.0


def test_importance_stars_and_hits_lift_the_score() -> None:
    plain = Candidate(mem(), "lexical", 0.5, "")
    lifted = Candidate(mem(importance=0.9, hit_count=5, starred=True), "lexical", 0.5, "")
    assert final_score(lifted, NOW, retrospective=False) > final_score(
        plain, NOW, retrospective=False
    )


def test_order_follows_p_whatever_the_stage() -> None:
    a = Candidate(mem(1, content="甲乙丙丁"), "vector", 0.9, "")
    b = Candidate(mem(2, content="戊己庚辛"), "lexical", 0.3, "")
    assert [c.memory.id for c in select([a, b], 5, NOW)] == [1, 2]


def test_near_identical_memories_do_not_fill_the_slots() -> None:
    same = [
        Candidate(mem(i, content="小明每周六去琴行上吉他课"), "lexical", 0.9, "")
        for i in range(1, 4)
    ]
    other = Candidate(mem(9, content="小红喜欢吃火锅"), "lexical", 0.4, "")
    chosen = select([*same, other], 5, NOW)
    assert [c.memory.id for c in chosen] == [1, 9]


def test_contradicting_memories_are_shown_together() -> None:
    cands = [
        Candidate(mem(i, content=f"内容{i}号"), "lexical", 1.0 - i / 10, "") for i in range(1, 7)
    ]
    chosen = select(cands, 5, NOW, contradicts={1: frozenset({6}), 6: frozenset({1})})
    ids = [c.memory.id for c in chosen]
    assert ids[:2] == [1, 6]
    assert len(ids) == 5


@given(
    st.lists(
        st.tuples(
            st.integers(1, 30), st.sampled_from(["lexical", "vector", "graph"]), st.floats(0, 2)
        ),
        max_size=25,
    ),
    st.integers(0, 6),
)
def test_selection_is_bounded_and_unique(items: list[tuple[int, str, float]], limit: int) -> None:
    cands = [
        Candidate(mem(i, content=f"第{i}条记忆的内容"), stage, score, "")  # type: ignore[arg-type]
        for i, stage, score in items
    ]
    chosen = select(cands, limit, NOW)
    ids = [c.memory.id for c in chosen]
    assert len(ids) <= limit
    assert len(ids) == len(set(ids))
    assert set(ids) <= {i for i, _, _ in items}


def test_restatements_are_represented_by_the_first_one() -> None:
    first = mem(1, content="小明每周六下午去琴行上吉他课")
    later = dataclasses.replace(mem(2, content="小明每周六下午去琴行上吉他课吧"), created_at=NOW)
    chosen = select(
        [Candidate(later, "lexical", 0.9, "b"), Candidate(first, "lexical", 0.8, "a")], 5, NOW
    )
    assert [c.memory.id for c in chosen] == [1]
    assert "另有1条" in chosen[0].reason


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("阿花家的猫叫年糕", "阿花家的猫叫汤圆"),
        ("小明周末常去的店有街角那家面馆", "小明周末常去的店有楼下那家烧烤"),
        ("Tom lives in Leeds these days", "Tom lives in York these days"),
    ],
)
def test_the_same_frame_with_another_value_is_two_memories(a: str, b: str) -> None:
    one, two = mem(1, content=a), mem(2, content=b)
    chosen = select(
        [Candidate(one, "lexical", 0.9, "a"), Candidate(two, "lexical", 0.8, "b")], 5, NOW
    )
    assert {c.memory.id for c in chosen} == {1, 2}


@given(st.text(alphabet="小明去琴行上吉他课周六下午的了吧", min_size=4, max_size=16))
def test_a_text_never_swaps_content_with_itself_plus_a_particle(text: str) -> None:
    assert not swaps_content(text, text)
    assert not swaps_content(text, text + "吧")


def _grouped_pair_by_pair(texts: list[str]) -> list[list[int]]:
    """The grouping by its definition: each text joins the first group whose head it
    restates, one comparison at a time."""
    groups: list[list[int]] = []
    for i, text in enumerate(texts):
        for group in groups:
            if restates(Said.of(text), Said.of(texts[group[0]])):
                group.append(i)
                break
        else:
            groups.append([i])
    return groups


@given(
    st.lists(
        st.text(alphabet="小明在学吉他周六下午去琴行上课了2 3", min_size=0, max_size=14),
        max_size=12,
    )
)
def test_grouping_all_pairs_at_once_is_grouping_pair_by_pair(texts: list[str]) -> None:
    got = restatement_groups(list(range(len(texts))), lambda i: Said.of(texts[i]))
    assert got == _grouped_pair_by_pair(texts)
