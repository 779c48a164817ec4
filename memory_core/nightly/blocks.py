"""The nightly results as the chat prompt's blocks (docs/design.md#replies).

Active time-bound states, the seven cards, the relationship timeline and the latest
diaries are read as they are. The background diary is the one judgement here: when
several recalled memories come from the same older day, that day's diary comes along
as context, labelled by the chat prompt as "background of an earlier day".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from memory_core.storage import Card, NightlyRepo
from memory_core.storage.schema import CARD_KINDS
from memory_core.types import Memory, Recalled

from .days import day_of
from .ports import MemoryPort
from .types import NightlyBlocks

BACKGROUND_MIN_HITS = 2
"""Recalled memories from one older day needed to bring its diary along."""
TIMELINE_ENTRIES = 10
STATE_LIMIT = 200


def active_state_lines(states: Iterable[Memory], now: datetime, tz: ZoneInfo) -> tuple[str, ...]:
    """Time-bound states valid at `now`, oldest first, with their deadline when known."""
    lines: list[str] = []
    for m in sorted(states, key=lambda s: (s.valid_from or s.created_at, s.id)):
        if m.type != "state" or m.status != "active":
            continue
        if m.valid_from is not None and m.valid_from > now:
            continue
        if m.valid_to is not None and m.valid_to <= now:
            continue
        subject = "" if m.subject in ("group", "") else f"{m.subject}："
        until = "" if m.valid_to is None else f"（到 {m.valid_to.astimezone(tz):%m-%d}）"
        lines.append(f"{subject}{m.content}{until}")
    return tuple(lines)


def card_pairs(cards: dict[str, Card]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (kind, cards[kind].content)
        for kind in CARD_KINDS
        if kind in cards and cards[kind].content.strip()
    )


def background_days(
    memory_days: Sequence[date | None], before: date | None, min_hits: int = BACKGROUND_MIN_HITS
) -> list[date]:
    """Older days (before `before`) at least `min_hits` recalled memories come from.

    Best first: more hits, then the more recent day. Pure.
    """
    counts = Counter(d for d in memory_days if d is not None and (before is None or d < before))
    ranked = sorted(((n, d) for d, n in counts.items() if n >= min_hits), reverse=True)
    return [d for _, d in ranked]


def memory_days(
    recalled: Sequence[Memory],
    evidence_at: Mapping[int, datetime],
    tz: ZoneInfo,
    cutoff: time,
) -> list[date]:
    """The day each recalled memory comes from: its earliest evidence, else when it
    became valid. Pure."""
    return [
        day_of(evidence_at.get(m.id) or m.valid_from or m.created_at, tz, cutoff) for m in recalled
    ]


async def build(
    scope: str,
    now: datetime,
    recalled: Sequence[Recalled],
    *,
    repo: NightlyRepo,
    memories: MemoryPort,
    tz: ZoneInfo,
    cutoff: time,
    recent_diaries: int,
) -> NightlyBlocks:
    mine = [r.memory for r in recalled if r.memory.scope == scope]
    looking_back = len(mine) >= BACKGROUND_MIN_HITS
    material = await repo.prompt_material(
        scope,
        diaries=recent_diaries,
        timeline=TIMELINE_ENTRIES,
        memory_ids=[m.id for m in mine] if looking_back else [],
    )
    states = await memories.newest(scope, types=["state"], status="active", limit=STATE_LIMIT)
    background: tuple[str, str] | None = None
    if looking_back:
        shown = {date.fromisoformat(d.day) for d in material.diaries}
        before = min(shown) if shown else day_of(now, tz, cutoff)
        for older in background_days(memory_days(mine, material.evidence_at, tz, cutoff), before):
            found = await repo.diary(scope, older.isoformat())
            if found is not None:
                background = (found.day, found.content)
                break
    return NightlyBlocks(
        states=active_state_lines(states, now, tz),
        cards=card_pairs(material.cards),
        timeline=tuple(f"{t.day}：{t.content}" for t in material.timeline),
        recent_diaries=tuple((d.day, d.content) for d in material.diaries),
        background_diary=background,
    )
