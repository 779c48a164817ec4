"""The numbers `yuji eval` reports (pure): per tier hit@5 in any band and as `sure`,
false recall, leakage, stale, latency percentiles, and every query's injected items."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .dataset import NEGATIVE_TIERS, DataQuery


@dataclass(frozen=True, slots=True)
class Answer:
    """What one recall returned for one query: dataset ids (None for generated
    memories) and scopes of every injected memory, and the time it took."""

    query: DataQuery
    ids: tuple[str | None, ...]
    scopes: tuple[str, ...]
    ms: float
    bands: tuple[str, ...] = ()
    """The band of each injected item (`sure` | `related`); empty = every item sure
    (the baselines have no bands)."""
    p: tuple[float, ...] = ()
    """P of each injected item (empty for the baselines)."""

    def sure_ids(self) -> set[str | None]:
        if not self.bands:
            return set(self.ids)
        return {i for i, band in zip(self.ids, self.bands, strict=True) if band == "sure"}

    def injected(self) -> list[dict[str, Any]]:
        """`{"id", "band", "p"}` per injected item (generated memories: id null)."""
        bands = self.bands or ("sure",) * len(self.ids)
        ps = self.p or (None,) * len(self.ids)
        return [{"id": i, "band": b, "p": p} for i, b, p in zip(self.ids, bands, ps, strict=True)]


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def report(answers: Sequence[Answer]) -> dict[str, Any]:
    """`{"tiers": {T: {"n", "rate", "sure_rate", "stale"}}, "false_recall", "leakage",
    "stale", "latency_ms", "queries"}`.

    For positive tiers `rate` is hit@5 (an expected memory injected in any band) and
    `sure_rate` the share whose expected memory was injected as sure; for the
    negative, leakage and chatter tiers `rate` is the share with anything injected and
    `sure_rate` the share with anything injected as sure. A tier's `stale` counts the
    `expect_none` memories its queries got (for `temporal`: a replaced version given
    to a question about now); the top-level `stale` sums them. `queries` lists each query
    with its tier and injected items (`id`, `band`, `p`)."""
    by_tier: dict[str, list[Answer]] = {}
    for a in answers:
        by_tier.setdefault(a.query.tier, []).append(a)
    tiers: dict[str, dict[str, float | int]] = {}
    for tier, group in sorted(by_tier.items()):
        if group[0].query.positive:
            hits = sum(1 for a in group if set(a.query.expect_any) & {i for i in a.ids if i})
            sure = sum(1 for a in group if set(a.query.expect_any) & a.sure_ids())
        else:
            hits = sum(1 for a in group if a.ids)
            sure = sum(1 for a in group if a.sure_ids())
        n = len(group)
        stale_here = sum(1 for a in group for i in a.ids if i and i in a.query.expect_none)
        tiers[tier] = {
            "n": n,
            "rate": round(hits / n, 4),
            "sure_rate": round(sure / n, 4),
            "stale": stale_here,
        }
    negatives = [a for a in answers if a.query.tier in NEGATIVE_TIERS]
    false_recall = sum(1 for a in negatives if a.ids) / len(negatives) if negatives else 0.0
    leakage = sum(1 for a in answers for s in a.scopes if s != a.query.scope)
    stale = sum(1 for a in answers for i in a.ids if i and i in a.query.expect_none)
    times = [a.ms for a in answers]
    return {
        "tiers": tiers,
        "false_recall": round(false_recall, 4),
        "leakage": leakage,
        "stale": stale,
        "latency_ms": {
            "p50": round(percentile(times, 50), 3),
            "p95": round(percentile(times, 95), 3),
        },
        "queries": [
            {"id": a.query.id, "tier": a.query.tier, "injected": a.injected()} for a in answers
        ],
    }
