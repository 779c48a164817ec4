"""The hybrid order and the fusion of P's order with it (recall/fusion.py), pure."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memory_core.recall.fusion import ABSENT, fused, hybrid_ranks, kept_by_hybrid

ps = st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30)


@given(ps)
def test_a_trusted_wake_keeps_ps_order(p: list[float]) -> None:
    arr = np.array(p)
    assert (fused(arr, np.arange(len(p)), 1.0) == arr).all()


@given(ps, st.floats(0.0, 0.99), st.randoms())
def test_the_fused_score_is_bounded_by_the_best_p(
    p: list[float], depth: float, rng: random.Random
) -> None:
    arr = np.array(p)
    hybrid = np.array(rng.sample(range(len(p)), len(p)))
    out = fused(arr, hybrid, depth)
    assert out.shape == arr.shape
    assert np.isfinite(out).all()
    assert out.max() <= arr.max() + 1e-12


def test_out_of_depth_the_hybrids_top_leads_and_is_never_dropped() -> None:
    p = np.array([0.9, 0.01, 0.02, 0.03])
    hybrid = np.array([3, 0, 1, 2])
    out = fused(p, hybrid, 0.0)
    assert int(np.argmax(out)) == 1
    assert kept_by_hybrid(hybrid, 0.5, 2).tolist() == [False, True, True, False]
    assert not kept_by_hybrid(hybrid, 1.0, 2).any()


@given(
    st.lists(st.integers(1, 60), unique=True, max_size=20),
    st.lists(st.integers(1, 60), unique=True, max_size=20),
)
def test_hybrid_ranks_are_a_ranking_of_what_the_orders_hold(
    dense: list[int], words: list[int]
) -> None:
    ids = sorted(set(dense) | set(words) | {99})
    ranks = hybrid_ranks(
        ids, {m: r for r, m in enumerate(dense)}, {m: r for r, m in enumerate(words)}
    )
    held = [int(r) for m, r in zip(ids, ranks, strict=True) if m != 99]
    assert sorted(held) == list(range(len(held)))
    assert int(ranks[ids.index(99)]) == ABSENT
    if dense:
        both = set(dense) & set(words)
        best = min(ranks[ids.index(m)] for m in ids if m != 99)
        assert best == 0
        if dense[0] in both and words and words[0] == dense[0]:
            assert ranks[ids.index(dense[0])] == 0


@given(
    st.lists(st.integers(1, 60), unique=True, max_size=20),
    st.lists(st.integers(1, 60), unique=True, max_size=20),
    st.lists(st.integers(1, 60), unique=True, max_size=20),
)
def test_context_words_only_fill_what_the_wake_leaves_empty(
    dense: list[int], words: list[int], context: list[int]
) -> None:
    ids = sorted(set(dense) | set(words) | set(context))
    alone = hybrid_ranks(
        ids, {m: r for r, m in enumerate(dense)}, {m: r for r, m in enumerate(words)}
    )
    both = hybrid_ranks(
        ids,
        {m: r for r, m in enumerate(dense)},
        {m: r for r, m in enumerate(words)},
        {m: r for r, m in enumerate(context)},
    )
    held = set(dense) | set(words)
    for m, a, b in zip(ids, alone, both, strict=True):
        if m in held:
            assert a == b  # the wake's own order is untouched
        else:
            assert b >= len(held)
