"""The nightly results as the chat prompt's blocks (SPEC §9).

Active time-bound states, the seven cards, the relationship timeline and the latest
diaries are read as they are. The background diary is the one judgement here: when
several recalled memories come from the same older day, that day's diary comes along
as context, labelled by the chat prompt as "background of an earlier day".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from memory_core.storage.nightly_repo import Card, NightlyRepo
from memory_core.storage.schema import CARD_KINDS
from memory_core.types import Memory, Recalled

from .days import day_of
from .ports import ArchivePort, MemoryPort
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


async def memory_day(
    memory: Memory,
    *,
    memories: MemoryPort,
    archive: ArchivePort,
    repo: NightlyRepo,
    tz: ZoneInfo,
    cutoff: time,
) -> date | None:
    """The day a memory comes from: its earliest evidence, else when it became valid."""
    refs = await memories.evidence(memory.scope, memory.id)
    instants: list[datetime] = []
    fragment_ids = [r.fragment_id for r in refs if r.fragment_id is not None]
    experience_ids = [r.experience_id for r in refs if r.experience_id is not None]
    if fragment_ids:
        instants += [
            f.first_sent_at for f in await repo.fragments_by_ids(memory.scope, fragment_ids)
        ]
    if experience_ids:
        instants += [e.sent_at for e in await archive.get_many(memory.scope, experience_ids)]
    if not instants:
        instants.append(memory.valid_from or memory.created_at)
    return day_of(min(instants), tz, cutoff)


async def build(
    scope: str,
    now: datetime,
    recalled: Sequence[Recalled],
    *,
    repo: NightlyRepo,
    memories: MemoryPort,
    archive: ArchivePort,
    tz: ZoneInfo,
    cutoff: time,
    recent_diaries: int,
) -> NightlyBlocks:
    states = await memories.list(scope, types=["state"], status="active", limit=STATE_LIMIT)
    cards = await repo.current_cards(scope)
    timeline = await repo.timeline(scope, TIMELINE_ENTRIES)
    diaries = await repo.recent_diaries(scope, recent_diaries) if recent_diaries > 0 else []
    shown = {date.fromisoformat(d.day) for d in diaries}
    background: tuple[str, str] | None = None
    mine = [r.memory for r in recalled if r.memory.scope == scope]
    if len(mine) >= BACKGROUND_MIN_HITS:
        days = [
            await memory_day(m, memories=memories, archive=archive, repo=repo, tz=tz, cutoff=cutoff)
            for m in mine
        ]
        before = min(shown) if shown else day_of(now, tz, cutoff)
        for older in background_days(days, before):
            found = await repo.diary(scope, older.isoformat())
            if found is not None:
                background = (found.day, found.content)
                break
    return NightlyBlocks(
        states=active_state_lines(states, now, tz),
        cards=card_pairs(cards),
        timeline=tuple(f"{t.day}：{t.content}" for t in timeline),
        recent_diaries=tuple((d.day, d.content) for d in diaries),
        background_diary=background,
    )
