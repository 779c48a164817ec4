"""The plain hybrid order and how P's order leans on it (pure).

The hybrid is what a recall without a relevance model would do: reciprocal rank
fusion of the dense order (weight 0.7) and the wake's word order (0.3), k = 60,
exactly as the baseline `yuji eval --baselines` reports as `rrf_hybrid`. The words
only the wake's context says come after everything the wake's own orders hold: they
fill the places the wake leaves empty and never push its candidates down (measured on
conversation-shaped recall, every weight that mixed them in lowered hit@5: they mostly
find what the conversation has just said). It is recall's floor: P may
reorder it and promote from deeper, but where P is out of its depth (a wake shape its
training corpus lacks, `Wake.depth` < 1) the order leans on the hybrid's, and the
hybrid's own top is never dropped as noise.

The fused score of a candidate is P itself for a wake P is trusted on (depth 1), so
questions keep P's order; otherwise reciprocal ranks of both orders, weighted by the
depth, scaled to the best P so the ranking's small lifts (importance, recency) stay
small beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

HYBRID_K = 60
DENSE_WEIGHT = 0.7
WORDS_WEIGHT = 0.3
FUSED_K = 3
"""Reciprocal-rank constant of the P / hybrid fusion: small, so the top ranks stay
apart (the ranking's lifts move a score by a few percent)."""
ABSENT = 10_000
"""The hybrid rank of a candidate no hybrid order holds (a link, a successor)."""

Vector = npt.NDArray[np.float64]


def hybrid_ranks(
    ids: Sequence[int],
    dense: Mapping[int, int],
    words: Mapping[int, int],
    context_words: Mapping[int, int] | None = None,
) -> npt.NDArray[np.int64]:
    """Each candidate's rank (0 = best) in the hybrid order; `ABSENT` when no order
    holds it. The orders map id -> rank (0 = best); `context_words` rank after all
    the others."""
    score: dict[int, float] = {}
    for order, weight in ((dense, DENSE_WEIGHT), (words, WORDS_WEIGHT)):
        for mid, rank in order.items():
            score[mid] = score.get(mid, 0.0) + weight / (HYBRID_K + rank + 1)
    ranked = sorted(score, key=lambda mid: (-score[mid], mid))
    later = context_words or {}
    ranked += sorted((mid for mid in later if mid not in score), key=lambda mid: (later[mid], mid))
    at = {mid: r for r, mid in enumerate(ranked)}
    return np.array([at.get(mid, ABSENT) for mid in ids], dtype=np.int64)


def fused(p: Vector, hybrid: npt.NDArray[np.int64], depth: float) -> Vector:
    """The order score: P where depth is 1; else reciprocal ranks of P's order and the
    hybrid's, weighted by depth, scaled so the best equals the best P."""
    if depth >= 1.0 or not len(p):
        return p
    p_rank = np.empty(len(p), dtype=np.int64)
    p_rank[np.lexsort((np.arange(len(p)), -p))] = np.arange(len(p))
    out = depth / (FUSED_K + 1 + p_rank) + (1 - depth) / (FUSED_K + 1 + hybrid)
    return out / out.max() * float(p.max())


def kept_by_hybrid(
    hybrid: npt.NDArray[np.int64], depth: float, limit: int
) -> npt.NDArray[np.bool_]:
    """The candidates the floor may not drop: the hybrid's top `limit` when P is out
    of its depth (none when it is trusted)."""
    if depth >= 1.0:
        return np.zeros(len(hybrid), dtype=bool)
    return hybrid < limit
