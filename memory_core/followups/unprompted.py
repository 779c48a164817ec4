"""Asking unprompted (docs/design.md#follow-ups): where the chat allows it, in the
daytime, the persona asks one due follow-up in its own chat, written by the chat model
(the `followup` job) from the persona, the plan and the last few messages.

The rules, each a reason to send nothing this time (the follow-up stays due until its
window ends, so nothing is lost): no model; outside `YUJI_FOLLOWUP_HOURS`; the chat
does not ask unprompted (groups until their admin's `/followups on`, private chats per
`YUJI_FOLLOWUP_PRIVATE`) or is muted; someone spoke there within `YUJI_FOLLOWUP_QUIET_S`;
the chat had one today (local day) or the person one within a week; the person asked
not to be asked; the model failed or its text is out of character; the platform did
not take it. `choose` (pure) picks; `Unprompted.run_once` does the rest. A message from
the person in that chat within a day of the send marks it answered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from memory_core.errors import LLMError
from memory_core.llm.base import LLMClient
from memory_core.llm.wire import strip_think
from memory_core.prompts.chat import PromptLine
from memory_core.prompts.followup import followup_prompt
from memory_core.types import Experience, is_group_scope

from .due import FollowUp, local_day
from .service import FollowUps

WEEK = timedelta(days=7)
ANSWER_WITHIN = timedelta(days=1)
RECENT_SHOWN = 6
"""The chat's last messages the model sees when it writes the follow-up."""

Send = Callable[[str, str], Awaitable[bool]]
"""(chat, text) -> whether the platform took it (a plain send, no reply target)."""


@dataclass(frozen=True, slots=True)
class Sent:
    """A follow-up sent unprompted: where, to whom, when."""

    scope: str
    person: str
    at: datetime


def in_hours(now: datetime, zone: ZoneInfo, hours: str) -> bool:
    """Whether local `now` is within `HH:MM-HH:MM` (start included, end not)."""
    start, _, end = hours.partition("-")
    local = f"{now.astimezone(zone):%H:%M}"
    return start <= local < end


def choose(
    due: Sequence[FollowUp],
    *,
    scope: str,
    sent: Sequence[Sent],
    muted_people: set[str],
    now: datetime,
    zone: ZoneInfo,
) -> FollowUp | None:
    """The one follow-up to send in `scope` now, the oldest plan first; None when the
    chat had one this local day, or when every due person of it is muted or had one
    within a week (in any chat)."""
    today = local_day(now, zone)
    if any(s.scope == scope and local_day(s.at, zone) == today for s in sent):
        return None
    for f in sorted(due, key=lambda f: (f.window.day, f.memory.id)):
        if f.memory.scope != scope or f.state != "due" or f.person in muted_people:
            continue
        if any(s.person == f.person and now - s.at < WEEK for s in sent):
            continue
        return f
    return None


@dataclass(frozen=True, slots=True)
class Asked:
    scope: str
    memory_id: int
    person: str
    text: str


class Unprompted:
    def __init__(
        self,
        followups: FollowUps,
        llm: LLMClient | None,
        *,
        ok: Callable[[str], bool],
        persona: Callable[[], str],
        is_muted: Callable[[str], Awaitable[bool]],
        recent: Callable[[str, int], Awaitable[Sequence[Experience]]],
    ) -> None:
        self.followups = followups
        self.llm = llm
        self._ok = ok
        self._persona = persona
        self._is_muted = is_muted
        self._recent = recent

    async def run_once(self, send: Send) -> list[Asked]:
        """Mark what was answered, then send what is due where allowed (one per chat)."""
        followups, repo = self.followups, self.followups.repo
        settings, now, zone = followups.live.current, followups.clock.now(), followups.zone
        await self._answered(now)
        if self.llm is None or not in_hours(now, zone, settings.followup_hours):
            return []
        due = await followups.due(None, now)
        sent = [Sent(*row) for row in await repo.sent_since(now - WEEK)]
        quiet = timedelta(seconds=settings.followup_quiet_s)
        asked: list[Asked] = []
        for scope in sorted({f.memory.scope for f in due}):
            if not await followups.asks_unprompted(scope) or await self._is_muted(scope):
                continue
            if quiet and await repo.spoke(scope, None, now - quiet, now) is not None:
                continue
            muted = await repo.muted(scope)
            chosen = choose(due, scope=scope, sent=sent, muted_people=muted, now=now, zone=zone)
            if chosen is None:
                continue
            text = await self._write(chosen, now, zone)
            if text is None or not await send(scope, text):
                continue
            await followups.mark_asked(scope, chosen.memory.id, sent_text=text)
            sent.append(Sent(scope, chosen.person, now))
            asked.append(Asked(scope, chosen.memory.id, chosen.person, text))
        return asked

    async def _write(self, chosen: FollowUp, now: datetime, zone: ZoneInfo) -> str | None:
        assert self.llm is not None
        scope, settings = chosen.memory.scope, self.followups.live.current
        recent = await self._recent(scope, RECENT_SHOWN)
        lines = [
            PromptLine(m.sender_name or m.sender_id, m.text, f"{m.sent_at.astimezone(zone):%H:%M}")
            for m in recent
        ]
        local = now.astimezone(zone)
        messages = followup_prompt(
            persona=self._persona(),
            bot_name=settings.bot_name,
            person=chosen.memory.subject,
            plan=chosen.memory.content,
            day=f"{chosen.window.day:%Y-%m-%d}",
            now=f"{local:%Y-%m-%d %H:%M}",
            is_private=not is_group_scope(scope),
            recent=lines,
        )
        try:
            response = await self.llm.chat(messages, timeout_s=settings.llm_timeout_s, scope=scope)
        except LLMError:
            return None  # the model is down: it stays due, the next look tries again
        text = strip_think(response.message.content or "").strip()
        return text if text and self._ok(text) else None

    async def _answered(self, now: datetime) -> None:
        repo = self.followups.repo
        for scope, memory_id, person, at in await repo.awaiting_answer(now - 2 * ANSWER_WITHIN):
            if await repo.spoke(scope, person, at, min(now, at + ANSWER_WITHIN)) is not None:
                await self.followups.mark_answered(scope, memory_id)
