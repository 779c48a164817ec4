from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memory_core.vectors.fusion import rrf

rankings = st.lists(st.integers(1, 50), max_size=20, unique=True)


@given(rankings, rankings, st.floats(0.01, 1), st.floats(0.01, 1))
def test_rrf_keeps_every_item_once(a: list[int], b: list[int], wa: float, wb: float) -> None:
    fused = rrf([(a, wa), (b, wb)])
    assert sorted(fused) == sorted(set(a) | set(b))


@given(rankings)
def test_one_ranking_is_kept_in_order(a: list[int]) -> None:
    assert rrf([(a, 0.7)]) == a


def test_weights_decide_between_two_leaders() -> None:
    assert rrf([([1, 2], 0.7), ([2, 1], 0.3)]) == [1, 2]
    assert rrf([([1, 2], 0.3), ([2, 1], 0.7)]) == [2, 1]
    # An item both rankings agree on beats a leader of only one.
    assert rrf([([1, 3], 0.5), ([2, 3], 0.5)])[0] == 3
