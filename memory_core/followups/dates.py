"""Does the model's date agree with the words it cites? (pure)

Consolidation resolves "下周二", "后天", "3月31号" to a date; a wrong one would bring a
plan up on the wrong day, or never. So the date is read again from the cited messages
themselves, each at its own `sent_at`, with the project's own date reading
(`memory_core/recall/when.py`), and a follow-up is made only when they agree: the
plan's local day is one of the days its words name (for a state, its start or its end:
"下下周一去日本玩一周" names the start). Words that name no day ("月底", "过几天", a
tombstone) cannot disagree. Every day a message names counts, not only the first
("明天去北京出差，周六回来").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from memory_core.recall.when import named
from memory_core.types import Memory

PLAN_CUE = "打算"
"""when.py reads a bare weekday or month-day as the next one only when the words speak
of a plan. The words a dated plan cites do, whatever their wording ("周六去看演唱会"),
so they are read as a plan."""
MAX_NAMED = 8
"""Days read from one message at most (each a pass of when.py's patterns)."""


@dataclass(frozen=True, slots=True)
class Said:
    """A cited message (not the bot's): when it was sent and its words."""

    sent_at: datetime
    text: str


def named_days(said: Said, zone: ZoneInfo) -> list[tuple[date, date]]:
    """Every (first, last) local day the message names, in order."""
    text, found = said.text, list[tuple[date, date]]()
    for _ in range(MAX_NAMED):
        span = named(PLAN_CUE + text, said.sent_at, zone)
        if span is None:
            break
        last = (span.end - timedelta(seconds=1)).astimezone(zone).date()
        found.append((span.start.astimezone(zone).date(), last))
        cut = text.find(span.said)
        if cut < 0:
            break
        text = text[cut + len(span.said) :]
    return found


def agrees(memory: Memory, day: date, said: Sequence[Said], zone: ZoneInfo) -> bool | None:
    """Whether the plan's local `day` is a day its words name; None: they name no day."""
    spans = [span for s in said for span in named_days(s, zone)]
    if not spans:
        return None
    days = {day}
    if memory.type == "state" and memory.valid_from is not None:
        days.add(memory.valid_from.astimezone(zone).date())
    return any(first <= day <= last for first, last in spans for day in days)
