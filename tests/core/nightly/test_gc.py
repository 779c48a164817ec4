from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memory_core.nightly.gc import GcCandidate, GcRules, exemption, select_cold

NOW = datetime(2026, 11, 21, tzinfo=UTC)
RULES = GcRules(cold_after_days=120)


def cand(id: int = 1, *, idle_days: int = 200, **fields: object) -> GcCandidate:
    base: dict[str, object] = {
        "id": id,
        "type": "fact",
        "importance": 0.5,
        "created_at": NOW - timedelta(days=idle_days),
        "last_accessed_at": None,
        "hit_count": 0,
        "pinned": False,
        "starred": False,
        "in_chain": False,
    }
    base.update(fields)
    return GcCandidate(**base)  # type: ignore[arg-type]


def test_an_idle_uncredited_memory_goes_cold() -> None:
    assert select_cold([cand()], NOW, RULES, 10) == [1]


def test_each_exemption_keeps_a_memory_warm() -> None:
    exempt = [
        cand(2, pinned=True),
        cand(3, starred=True),
        cand(4, hit_count=1),
        cand(5, in_chain=True),
        cand(6, type="rule"),
        cand(7, importance=0.95),
        cand(8, idle_days=30),
        cand(9, last_accessed_at=NOW - timedelta(days=3)),
    ]
    assert select_cold(exempt, NOW, RULES, 10) == []
    assert exemption(exempt[0], RULES) == "pinned"
    assert exemption(exempt[3], RULES) == "in a supersede/contradict chain"


def test_longest_idle_first_and_limited() -> None:
    got = select_cold([cand(1, idle_days=150), cand(2, idle_days=300)], NOW, RULES, 1)
    assert got == [2]


def test_zero_days_disables_gc() -> None:
    assert select_cold([cand()], NOW, GcRules(cold_after_days=0), 10) == []


@given(
    pinned=st.booleans(),
    starred=st.booleans(),
    hits=st.integers(0, 3),
    chain=st.booleans(),
    idle=st.integers(0, 1000),
    importance=st.floats(0, 1),
)
def test_exempt_memories_never_go_cold(
    pinned: bool, starred: bool, hits: int, chain: bool, idle: int, importance: float
) -> None:
    c = cand(
        idle_days=idle,
        pinned=pinned,
        starred=starred,
        hit_count=hits,
        in_chain=chain,
        importance=importance,
    )
    cold = select_cold([c], NOW, RULES, 10) == [1]
    if pinned or starred or hits or chain or importance >= 0.9 or idle < 120:
        assert not cold
    else:
        assert cold
