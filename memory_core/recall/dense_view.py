"""The dense scores of a wake and its turns as recall reads them (pure): the
candidates they bring, the cosines of others, and one order for a wake in its
conversation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .dense_port import DenseScores, best_first


def top_view(
    scores: DenseScores | None, now_ids: frozenset[int], limit: int
) -> tuple[dict[int, int], dict[int, float], list[int]]:
    """(rank of the top `limit` visible now, cosine of the top ids, the best ended
    ones among the top)."""
    if scores is None or len(scores.ids) == 0:
        return {}, {}, []
    ids = scores.ids
    sims = scores.scores
    top = best_first(ids, sims, limit * 2)
    rank: dict[int, int] = {}
    past: list[int] = []
    for i in top:
        mid = int(ids[i])
        if mid in now_ids:
            if len(rank) < limit:
                rank[mid] = len(rank)
        elif len(past) < 3:
            past.append(mid)
    cosine = {int(i): float(s) for i, s in zip(ids[top], sims[top], strict=True)}
    return rank, cosine, past


def cosines_of(scores: DenseScores, wanted: Sequence[int]) -> dict[int, float]:
    """The cosine of each wanted id that the dense scores cover."""
    if not wanted:
        return {}
    mask = np.isin(scores.ids, np.asarray(wanted, dtype=scores.ids.dtype))
    return {int(i): float(v) for i, v in zip(scores.ids[mask], scores.scores[mask], strict=True)}


def joined(wake: DenseScores, turns: Sequence[tuple[DenseScores | None, float]]) -> DenseScores:
    """The wake's cosines with each context turn's added at its weight (the cosine with
    the weighted sum of their vectors, up to its length): the dense order of a wake
    read in its conversation."""
    total = wake.scores.astype(np.float64)
    for found, weight in turns:
        if found is None:
            continue
        if len(found.ids) == len(wake.ids) and (found.ids == wake.ids).all():
            total = total + weight * found.scores
        else:  # an approximate index returned other nearest ids: those it holds
            got = dict(zip(found.ids.tolist(), found.scores.tolist(), strict=True))
            total = total + weight * np.array([got.get(int(i), 0.0) for i in wake.ids])
    return DenseScores(wake.ids, total.astype(np.float32), wake.background, wake.complete)
