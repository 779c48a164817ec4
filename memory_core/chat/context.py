"""Gathering what the reply prompt shows besides the recalled memories.

Nightly blocks (states, cards, timeline, diaries, background diary; empty until the
nightly job has written them), the people the reply concerns (the asker's and the named
members' cards, whose word each recalled memory is: `core.person_cards`), at most one
due follow-up of the asker's (`core.followups`), unarchived fragment summaries, and the recent raw
messages: every message consolidation has not summarised yet (the newest
`recent_messages`), plus a few already-summarised ones just before them as a bridge.
Times are shown in the configured zone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

from memory_core.prompts.chat import (
    ChatPromptInput,
    PromptFollowUp,
    PromptLine,
    PromptMemory,
    PromptQuote,
)
from memory_core.settings import Settings
from memory_core.types import Experience, Recalled

from .ports import (
    ArchivePort,
    BlocksLike,
    BlocksPort,
    ContextPort,
    FollowupsPort,
    ImageTexts,
    PeoplePort,
    PeopleViewLike,
)

log = logging.getLogger("yuji.chat")

BRIDGE_MESSAGES = 3
FRAGMENTS_SHOWN = 8
WEEKDAYS = "一二三四五六日"


@dataclass(frozen=True, slots=True)
class Recent:
    bridge: tuple[Experience, ...]
    unsummarised: tuple[Experience, ...]


def select_recent(
    messages: Sequence[Experience], acked_id: int, *, limit: int, bridge: int = BRIDGE_MESSAGES
) -> Recent:
    """Pure: `messages` oldest first; split at the acknowledged watermark."""
    unsummarised = [m for m in messages if m.id > acked_id]
    fresh = unsummarised[-limit:] if limit > 0 else []
    if len(unsummarised) > len(fresh) or bridge <= 0:
        return Recent(bridge=(), unsummarised=tuple(fresh))  # a bridge would leave a gap
    summarised = [m for m in messages if m.id <= acked_id]
    return Recent(bridge=tuple(summarised[-bridge:]), unsummarised=tuple(fresh))


@dataclass(frozen=True, slots=True)
class ContextView:
    zone: ZoneInfo
    states: tuple[str, ...] = ()
    cards: tuple[tuple[str, str], ...] = ()
    timeline: tuple[str, ...] = ()
    recent_diaries: tuple[tuple[str, str], ...] = ()
    background_diary: tuple[str, str] | None = None
    fragments: tuple[str, ...] = ()
    recent: Recent = field(default_factory=lambda: Recent((), ()))
    contradicts: dict[int, int] = field(default_factory=dict[int, int])
    """memory id -> the injected memory it contradicts (both directions)."""
    texts: dict[int, str] = field(default_factory=dict[int, str])
    """experience id -> its text with image descriptions (`[图片：…]`), where any."""
    people: tuple[tuple[str, str], ...] = ()
    """(current name, person card) of the asker and the members the wake names."""
    words: dict[int, tuple[str, str]] = field(default_factory=dict[int, tuple[str, str]])
    """memory id -> (its member's current name, whose word it is)."""
    followup: PromptFollowUp | None = None
    """At most one due follow-up of the asker's, to ask about in passing."""

    def clock_label(self, instant: datetime, now: datetime | None = None) -> str:
        local = instant.astimezone(self.zone)
        if now is not None and local.date() != now.astimezone(self.zone).date():
            return local.strftime("%m-%d %H:%M")
        return local.strftime("%H:%M")

    def date_label(self, instant: datetime | None) -> str:
        return "" if instant is None else instant.astimezone(self.zone).strftime("%Y-%m-%d")

    def now_label(self, now: datetime) -> str:
        local = now.astimezone(self.zone)
        return f"{local:%Y-%m-%d %H:%M} 周{WEEKDAYS[local.weekday()]}"

    def lines(self, messages: Sequence[Experience], now: datetime) -> tuple[PromptLine, ...]:
        return tuple(
            PromptLine(
                sender=m.sender_name or m.sender_id,
                text=self.texts.get(m.id, m.text),
                time=self.clock_label(m.sent_at, now),
                is_bot=m.is_bot,
            )
            for m in messages
        )

    def prompt_input(
        self,
        *,
        persona: str,
        bot_name: str,
        is_private: bool,
        message: PromptLine,
        memories: tuple[PromptMemory, ...],
        now: datetime,
        quotes: tuple[PromptQuote, ...] = (),
    ) -> ChatPromptInput:
        return ChatPromptInput(
            persona=persona,
            bot_name=bot_name,
            now=self.now_label(now),
            is_private=is_private,
            message=message,
            states=self.states,
            cards=self.cards,
            timeline=self.timeline,
            recent_diaries=self.recent_diaries,
            memories=memories,
            people=self.people,
            followup=self.followup,
            quotes=quotes,
            background_diary=self.background_diary,
            fragments=self.fragments,
            recent=self.lines(self.recent.unsummarised, now),
            bridge=self.lines(self.recent.bridge, now),
        )


async def gather_context(
    scope: str,
    *,
    now: datetime,
    recalled: Sequence[Recalled],
    trigger_id: int | None,
    trigger_fingerprint: str,
    settings: Settings,
    archive: ArchivePort,
    context: ContextPort,
    blocks: BlocksPort | None,
    describe: ImageTexts | None = None,
    people: PeoplePort | None = None,
    asker: str | None = None,
    mentioned: Sequence[str] = (),
    text: str = "",
    followups: FollowupsPort | None = None,
) -> ContextView:
    zone = ZoneInfo(settings.timezone)
    limit = max(0, settings.recent_messages)
    # Independent reads: run them side by side (each on its own pooled connection).
    (messages, acked, fragments, pairs, nightly, concerned), followup = await asyncio.gather(
        asyncio.gather(
            archive.recent(scope, limit + BRIDGE_MESSAGES, before_id=trigger_id),
            context.acked_id(scope),
            context.open_fragments(scope, FRAGMENTS_SHOWN),
            context.contradicting_pairs(scope, [r.memory.id for r in recalled]),
            _nightly_blocks(blocks, scope, now, recalled),
            _people(people, scope, asker, mentioned, text, recalled),
        ),
        _followup(followups, scope, asker, now),
    )
    messages = [m for m in messages if m.fingerprint != trigger_fingerprint]
    contradicts: dict[int, int] = {}
    for a, b in pairs:
        contradicts.setdefault(a, b)
        contradicts.setdefault(b, a)
    recent = select_recent(messages, acked, limit=limit)
    texts = await describe([*recent.bridge, *recent.unsummarised]) if describe else {}
    return ContextView(
        zone=zone,
        states=tuple(nightly.states) if nightly else (),
        cards=tuple(nightly.cards) if nightly else (),
        timeline=tuple(nightly.timeline) if nightly else (),
        recent_diaries=tuple(nightly.recent_diaries) if nightly else (),
        background_diary=nightly.background_diary if nightly else None,
        fragments=tuple(fragments),
        recent=recent,
        contradicts=contradicts,
        texts=texts,
        people=tuple(concerned.cards) if concerned else (),
        words={k: (w.subject, w.said) for k, w in concerned.words.items()} if concerned else {},
        followup=followup,
    )


async def _nightly_blocks(
    blocks: BlocksPort | None, scope: str, now: datetime, recalled: Sequence[Recalled]
) -> BlocksLike | None:
    if blocks is None:
        return None
    try:
        return await blocks.blocks(scope, now, recalled)
    except Exception:
        # Cards and diaries enrich a reply; their failure must not stop it.
        log.exception("yuji: nightly blocks unavailable for %s", scope)
        return None


async def _people(
    people: PeoplePort | None,
    scope: str,
    asker: str | None,
    mentioned: Sequence[str],
    text: str,
    recalled: Sequence[Recalled],
) -> PeopleViewLike | None:
    if people is None:
        return None
    try:
        return await people.prompt_view(
            scope,
            asker=asker,
            mentioned=mentioned,
            text=text,
            memories=[r.memory for r in recalled],
        )
    except Exception:
        # Person cards and names enrich a reply; their failure must not stop it.
        log.exception("yuji: people unavailable for %s", scope)
        return None


async def _followup(
    followups: FollowupsPort | None, scope: str, asker: str | None, now: datetime
) -> PromptFollowUp | None:
    if followups is None or not asker:
        return None
    try:
        found = await followups.offer(scope, asker, now)
    except Exception:
        # A follow-up is a nicety of a reply; its failure must not stop it.
        log.exception("yuji: follow-ups unavailable for %s", scope)
        return None
    if found is None:
        return None
    memory = found.memory
    return PromptFollowUp(memory.id, memory.subject, memory.content, f"{found.window.day:%Y-%m-%d}")
