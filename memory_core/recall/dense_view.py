"""The dense scores of a wake as recall reads them (pure): the candidates they
bring and the cosines of the others."""

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
