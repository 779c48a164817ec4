"""`best_first` is the full sort's top k, `scores_of` the full mapping's lookup
(dense_port.py): recall takes a chat's top thirty of tens of thousands without sorting
them all, and must take exactly the ones the sort would."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memory_core.recall.dense_port import best_first, scores_of

# Few distinct values, so ties (by score, broken by id) are common; NaN sometimes.
SCORE = st.sampled_from([-1.0, -0.5, 0.0, -0.0, 0.25, 0.5, 0.5, 1.0, float("nan")])


@st.composite
def scored(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int]:
    n = draw(st.integers(0, 60))
    ids = draw(st.lists(st.integers(1, 10_000), min_size=n, max_size=n, unique=True))
    values = draw(st.lists(SCORE, min_size=n, max_size=n))
    k = draw(st.integers(0, n + 3))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    return np.asarray(ids, dtype=np.int64), np.asarray(values, dtype=dtype), k


@given(scored())
def test_best_first_is_the_full_sorts_top_k(case: tuple[np.ndarray, np.ndarray, int]) -> None:
    ids, scores, k = case
    expected = np.lexsort((ids, -scores))[:k]
    assert best_first(ids, scores, k).tolist() == expected.tolist()


def test_best_first_on_a_large_random_chat() -> None:
    rng = np.random.default_rng(7)
    ids = np.arange(1, 20_001, dtype=np.int64)
    scores = np.round(rng.normal(size=20_000), 2).astype(np.float32)  # many ties
    for k in (1, 30, 60, 19_999, 20_000):
        expected = np.lexsort((ids, -scores))[:k]
        assert best_first(ids, scores, k).tolist() == expected.tolist()


@given(
    st.lists(st.integers(1, 200), unique=True, max_size=40),
    st.lists(st.integers(0, 220), max_size=20),
)
def test_scores_of_is_the_full_mappings_lookup(present: list[int], wanted: list[int]) -> None:
    ids = np.asarray(sorted(present), dtype=np.int64)
    scores = (ids * 0.01).astype(np.float32)
    full = {int(i): float(s) for i, s in zip(ids, scores, strict=True)}
    expected = {i: full[i] for i in wanted if i in full}
    assert scores_of(ids, scores, wanted) == expected
