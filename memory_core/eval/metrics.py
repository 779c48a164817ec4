"""The numbers `yuji eval` reports (pure): per tier hit@5 in any band and as `sure`,
false recall, leakage, stale, latency percentiles, and every query's injected items."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .dataset import NEGATIVE_TIERS, DataQuery

QUOTED = 3
"""A question about messages counts a hit among this many quotes (hit@3)."""


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
    quotes: tuple[str | None, ...] = ()
    """Dataset ids of the quoted recent messages (None for a filler), best first."""
    quote_scopes: tuple[str, ...] = ()
    quote_bands: tuple[str, ...] = ()
    carried: tuple[bool, ...] = ()
    """Per injected item: of another chat and carried as the rule allows
    (carry_check.py); empty = none is."""

    def hit(self) -> tuple[bool, bool]:
        """(the answer was injected in any band, as sure): an expected memory among
        the memories, or for a question about messages an expected one among the
        (at most three) quotes."""
        if self.query.about_messages:
            wanted = set(self.query.expect_messages)
            found = {i for i in self.quotes[:QUOTED] if i}
            top = zip(self.quotes[:QUOTED], self.quote_bands[:QUOTED], strict=True)
            sure = {i for i, b in top if b == "sure"}
            return bool(wanted & found), bool(wanted & sure)
        wanted = set(self.query.expect_any)
        return bool(wanted & {i for i in self.ids if i}), bool(wanted & self.sure_ids())

    @property
    def empty(self) -> bool:
        """Nothing was injected (no memory, no quote)."""
        return not self.ids and not self.quotes

    def sure_ids(self) -> set[str | None]:
        if not self.bands:
            return set(self.ids)
        return {i for i, band in zip(self.ids, self.bands, strict=True) if band == "sure"}

    def quoted(self) -> list[dict[str, Any]]:
        """`{"id", "band"}` per quoted message (a filler: id null)."""
        return [{"id": i, "band": b} for i, b in zip(self.quotes, self.quote_bands, strict=True)]

    def injected(self) -> list[dict[str, Any]]:
        """`{"id", "band", "p"}` per injected item (generated memories: id null), and
        `"carried": true` on one carried from another chat as the rule allows."""
        bands = self.bands or ("sure",) * len(self.ids)
        ps = self.p or (None,) * len(self.ids)
        out = [{"id": i, "band": b, "p": p} for i, b, p in zip(self.ids, bands, ps, strict=True)]
        for item, carried in zip(out, self.carried_flags(), strict=True):
            if carried:
                item["carried"] = True
        return out

    def carried_flags(self) -> tuple[bool, ...]:
        return self.carried or (False,) * len(self.ids)

    def leaks(self) -> int:
        """Items (memories, quotes) of another chat than the query's, but those carried
        as the rule allows."""
        memories = sum(
            1
            for s, carried in zip(self.scopes, self.carried_flags(), strict=True)
            if s != self.query.scope and not carried
        )
        return memories + sum(1 for s in self.quote_scopes if s != self.query.scope)


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def report(answers: Sequence[Answer]) -> dict[str, Any]:
    """`{"tiers": {T: {"n", "rate", "sure_rate", "stale", "empty_rate"}}, "false_recall", "leakage",
    "carried", "stale", "latency_ms", "queries"}`.

    For positive tiers `rate` is hit@5 (an expected memory injected in any band) and
    `sure_rate` the share whose expected memory was injected as sure; for the
    negative, leakage and chatter tiers `rate` is the share with anything injected and
    `sure_rate` the share with anything injected as sure. `leakage` counts what came
    from another chat unless it was carried as the rule allows (`carried` counts those,
    overall and per tier where any). A tier's `stale` counts the
    `expect_none` memories its queries got (for `temporal`: a replaced version given
    to a question about now); `empty_rate` is the share of its queries that got nothing
    injected at all; the top-level `stale` sums them. `queries` lists each query
    with its tier and injected items (`id`, `band`, `p`)."""
    by_tier: dict[str, list[Answer]] = {}
    for a in answers:
        by_tier.setdefault(a.query.tier, []).append(a)
    tiers: dict[str, dict[str, float | int]] = {}
    for tier, group in sorted(by_tier.items()):
        if group[0].query.positive:
            hits = sum(1 for a in group if a.hit()[0])
            sure = sum(1 for a in group if a.hit()[1])
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
            "empty_rate": round(sum(1 for a in group if a.empty) / n, 4),
        }
        carried_here = sum(sum(a.carried_flags()) for a in group)
        if carried_here:
            tiers[tier]["carried"] = carried_here
        asked = [a for a in group if a.query.asker is not None]
        if asked:
            # Someone asked: an `expect_none` memory (another person's) stated as sure.
            tiers[tier]["wrong_person_sure"] = sum(
                1 for a in asked for i in a.sure_ids() if i and i in a.query.expect_none
            )
        if group[0].query.positive and not group[0].query.about_messages:
            tiers[tier]["first_rate"] = round(
                sum(1 for a in group if a.ids[:1] and a.ids[0] in a.query.expect_any) / n, 4
            )
    negatives = [a for a in answers if a.query.tier in NEGATIVE_TIERS]
    false_recall = sum(1 for a in negatives if a.ids) / len(negatives) if negatives else 0.0
    leakage = sum(a.leaks() for a in answers)
    carried = sum(sum(a.carried_flags()) for a in answers)
    stale = sum(int(t["stale"]) for t in tiers.values())
    times = [a.ms for a in answers]
    return {
        "tiers": tiers,
        "false_recall": round(false_recall, 4),
        "leakage": leakage,
        "carried": carried,
        "stale": stale,
        "latency_ms": {
            "p50": round(percentile(times, 50), 3),
            "p95": round(percentile(times, 95), 3),
        },
        "queries": [
            {"id": a.query.id, "tier": a.query.tier, "injected": a.injected(), "quoted": a.quoted()}
            for a in answers
        ],
    }
