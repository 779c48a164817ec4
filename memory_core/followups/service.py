"""`core.followups`: the follow-ups of a chat (or of every chat) at an instant, and
what is done about them (docs/design.md#follow-ups).

The list is computed on each call from the memories (due.py), so retracting,
superseding or forgetting a memory ends its follow-up at once, without a job having to
run; only what was done (asked, answered, dropped, refused) is stored.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime, time
from typing import cast
from zoneinfo import ZoneInfo

from memory_core.clock import Clock
from memory_core.errors import NotFound, NotPermitted, UsageError
from memory_core.settings import LiveSettings
from memory_core.storage import FollowupsRepo, PlanRow
from memory_core.storage.engine import Database
from memory_core.types import is_group_scope

from . import texts
from .dates import Said
from .due import Candidate, FollowUp, Recorded, followup_of, local_day, pick_offer

SHOWN = ("due", "asked", "upcoming")
"""The states `/followups` lists (the others are over)."""


class FollowUps:
    def __init__(self, db: Database, live: LiveSettings, clock: Clock) -> None:
        self.repo = FollowupsRepo(db)
        self.live = live
        self.clock = clock

    async def asks_unprompted(self, scope: str) -> bool:
        """Whether the persona may ask in this chat unprompted: the chat's own choice
        (`/followups on|off`), else private chats per YUJI_FOLLOWUP_PRIVATE, groups off."""
        chosen = await self.repo.chat_enabled(scope)
        if chosen is not None:
            return chosen
        return not is_group_scope(scope) and self.live.current.followup_private

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.live.current.timezone)

    async def listing(
        self, scope: str | None = None, now: datetime | None = None
    ) -> list[FollowUp]:
        """Every follow-up of `scope` (or of every chat) in any state, the oldest plan
        first: the chat's own memories through the one scope rule (`FollowupsRepo.plans`),
        each checked once more to be of the chat asked about (nothing carried into a
        chat is its follow-up)."""
        at = now or self.clock.now()
        days = self.live.current.followup_window_days
        cutoff = time.fromisoformat(self.live.current.nightly_time)
        found: list[FollowUp] = []
        for row in await self.repo.plans(scope):
            if scope is not None and row.memory.scope != scope:
                continue
            followup = followup_of(candidate(row), _recorded(row), at, self.zone, days, cutoff)
            if followup is not None and row.record is not None:
                record = row.record
                followup = replace(
                    followup,
                    offers=record.offers,
                    offered_day=record.offered_day,
                    asked_at=record.asked_at,
                    sent_text=record.sent_text,
                )
            if followup is not None:
                found.append(followup)
        return sorted(found, key=lambda f: (f.memory.scope, f.window.day, f.memory.id))

    async def due(self, scope: str | None = None, now: datetime | None = None) -> list[FollowUp]:
        """The follow-ups due at `now` (default: the clock's now)."""
        return [f for f in await self.listing(scope, now) if f.state == "due"]

    async def offer(self, scope: str, person: str, now: datetime) -> FollowUp | None:
        """The follow-up a reply to `person` in `scope` may carry now (due.pick_offer),
        unless they asked not to be asked here; counted as offered today."""
        if person in await self.repo.muted(scope):
            return None
        today = local_day(now, self.zone)
        chosen = pick_offer(await self.due(scope, now), person, today)
        if chosen is not None:
            await self.repo.offered(scope, chosen.memory.id, person, today.isoformat(), at=now)
        return chosen

    async def status_lines(self, scope: str) -> dict[str, str]:
        """`/status`: the chat's plans whose date disagreed with the words they cite, so
        no follow-up was made (the model resolved "下周二" to another day)."""
        refused = sum(1 for f in await self.listing(scope) if f.state == "refused")
        return {"日期对不上、不跟进的计划": f"{refused} 条"}

    async def drop(self, scope: str, memory_id: int, *, by: str) -> FollowUp:
        """An admin's `/followups drop`: the follow-up is never brought up again."""
        return await self._record(scope, memory_id, "dropped", reason=f"dropped by {by}")

    async def command(
        self,
        scope: str,
        text: str,
        *,
        asker: str,
        is_admin: Callable[[], Awaitable[bool]],
    ) -> str:
        """`/followups` (docs/chat-commands.md): what is due in this chat, for whom and
        why; an admin turns unprompted asking on or off (`on|off`) and drops one (`drop
        N`, N the plan's memory id as listed); anyone may ask not to be asked (`mute-me`,
        undone by `unmute-me`). The words are in texts.py."""
        action, _, rest = text.strip().partition(" ")
        now = self.clock.now()
        if action in ("", "list", "列表"):
            found = [f for f in await self.listing(scope, now) if f.state in SHOWN]
            return texts.listing(found, on=await self.asks_unprompted(scope))
        if action in ("mute-me", "unmute-me"):
            muted = action == "mute-me"
            await self.repo.set_muted(scope, asker, muted, at=now)
            return texts.MUTED if muted else texts.UNMUTED
        if action not in ("on", "off", "drop"):
            raise UsageError(texts.USAGE)
        if is_group_scope(scope) and not await is_admin():  # a private chat is its person's
            raise NotPermitted(texts.ADMIN_ONLY)
        if action == "drop":
            number = rest.strip().lstrip("#")
            if not number.isdigit():
                raise UsageError(texts.USAGE)
            dropped = await self.drop(scope, int(number), by=asker)
            return texts.dropped(dropped)
        await self.repo.set_chat(scope, action == "on", asker, at=now)
        return texts.TURNED_ON if action == "on" else texts.TURNED_OFF

    async def mark_asked(self, scope: str, memory_id: int, *, sent_text: str | None = None) -> None:
        await self._record(scope, memory_id, "asked", sent_text=sent_text)

    async def mark_answered(self, scope: str, memory_id: int) -> None:
        await self._record(scope, memory_id, "answered")

    async def _record(
        self,
        scope: str,
        memory_id: int,
        state: Recorded,
        *,
        reason: str = "",
        sent_text: str | None = None,
    ) -> FollowUp:
        now = self.clock.now()
        found = next((f for f in await self.listing(scope, now) if f.memory.id == memory_id), None)
        if found is None:
            raise NotFound(f"no follow-up of memory #{memory_id} in this chat")
        await self.repo.record(
            scope, memory_id, found.person, state, at=now, reason=reason, sent_text=sent_text
        )
        return found


def candidate(row: PlanRow) -> Candidate:
    """A stored plan as the rules read it (due.py)."""
    said = tuple(Said(at, text) for at, text in row.said)
    return Candidate(row.memory, row.told_first, row.told_last, row.superseded, said, row.first)


def _recorded(row: PlanRow) -> Recorded | None:
    state = row.record.state if row.record is not None else None
    return cast(Recorded, state) if state is not None else None
