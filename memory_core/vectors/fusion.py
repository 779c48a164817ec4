"""Reciprocal rank fusion (pure): how MaiBot's A_Memorix and AstrBot's LivingMemory
combine vector and bm25 rankings, kept here as a baseline for `yuji eval`."""

from __future__ import annotations

from collections.abc import Sequence

RRF_K = 60


def rrf(rankings: Sequence[tuple[Sequence[int], float]], *, k: int = RRF_K) -> list[int]:
    """Fuse (ranking best first, weight) pairs: score(d) = sum of weight / (k + rank),
    rank counted from 1. Best first; ties go to the lower id."""
    scores: dict[int, float] = {}
    for ranking, weight in rankings:
        for rank, item in enumerate(dict.fromkeys(ranking), start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return sorted(scores, key=lambda item: (-scores[item], item))
