"""The numbers `yuji eval` reports (pure): hit@5 per tier, false recall, leakage,
stale and latency percentiles."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .dataset import DataQuery


@dataclass(frozen=True, slots=True)
class Answer:
    """What one recall returned for one query: dataset ids (None for generated
    memories) and scopes of every injected memory, and the time it took."""

    query: DataQuery
    ids: tuple[str | None, ...]
    scopes: tuple[str, ...]
    ms: float


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def report(answers: Sequence[Answer]) -> dict[str, Any]:
    """`{"tiers": {T: {"n", "rate"}}, "false_recall", "leakage", "stale", "latency_ms"}`.

    rate is hit@5 for positive tiers and the share of queries answered with
    anything for the negative and leakage tiers."""
    by_tier: dict[str, list[Answer]] = {}
    for a in answers:
        by_tier.setdefault(a.query.tier, []).append(a)
    tiers: dict[str, dict[str, float | int]] = {}
    for tier, group in sorted(by_tier.items()):
        if group[0].query.positive:
            hits = sum(1 for a in group if set(a.query.expect_any) & {i for i in a.ids if i})
        else:
            hits = sum(1 for a in group if a.ids)
        tiers[tier] = {"n": len(group), "rate": round(hits / len(group), 4)}
    negatives = [a for a in answers if not a.query.positive]
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
    }
