"""Pure helpers of the console pages: day buckets for the charts, card diffs and a
member's current name."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from memory_core.storage import PersonName


def day_buckets(hourly: Mapping[str, int], today: date, days: int, zone: ZoneInfo) -> list[int]:
    """Counts per local day for the `days` days ending `today` (oldest first), from
    counts per UTC hour keyed "YYYY-MM-DD HH". An hour falls into the local day of its
    first instant (exact for zones whose offsets are whole hours)."""
    first = today - timedelta(days=days - 1)
    totals = [0] * days
    for key, count in hourly.items():
        try:
            start = datetime.strptime(key, "%Y-%m-%d %H").replace(tzinfo=UTC)
        except ValueError:
            continue
        index = (start.astimezone(zone).date() - first).days
        if 0 <= index < days:
            totals[index] += count
    return totals


def bar_heights(values: list[int], height: int = 40) -> list[int]:
    """Each value scaled into 0..height (the largest reaches height; zeros stay 0)."""
    top = max(values, default=0)
    if top <= 0:
        return [0 for _ in values]
    return [max(1, round(v * height / top)) if v > 0 else 0 for v in values]


def line_diff(old: str, new: str) -> list[tuple[str, str]]:
    """(mark, line) pairs from `old` to `new`: "+" added, "-" removed, " " kept."""
    pairs: list[tuple[str, str]] = []
    for line in difflib.ndiff(old.splitlines(), new.splitlines()):
        mark, text = line[:1], line[2:]
        if mark in "+- ":
            pairs.append((mark, text))
    return pairs


OWN_SOURCES = ("card", "nickname")
"""Names a member showed themselves (a group card, a nickname), against the ones others
gave them (the chat's aliases, an @-mention)."""


def current_name(names: Sequence[PersonName]) -> str:
    """What a member goes by in a chat now: the name they showed last (card or nickname),
    else the alias, else the mention seen last; empty without names. `names` latest
    first, as the person index reads them."""
    for sources in (OWN_SOURCES, ("alias",), ("mention",)):
        found = [n for n in names if n.source in sources]
        if found:
            return max(found, key=lambda n: n.last_seen).name
    return ""
