"""`core.followups`: the follow-ups of a chat (or of every chat) at an instant, and
what is done about them (docs/design.md#follow-ups).

The list is computed on each call from the memories (due.py), so retracting,
superseding or forgetting a memory ends its follow-up at once, without a job having to
run; only what was done (asked, answered, dropped, refused) is stored.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import cast
from zoneinfo import ZoneInfo

from memory_core.clock import Clock
from memory_core.errors import NotFound
from memory_core.settings import LiveSettings
from memory_core.storage import FollowupsRepo, PlanRow
from memory_core.storage.engine import Database

from .dates import Said
from .due import Candidate, FollowUp, Recorded, followup_of, local_day, pick_offer


class FollowUps:
    def __init__(self, db: Database, live: LiveSettings, clock: Clock) -> None:
        self.repo = FollowupsRepo(db)
        self._live = live
        self._clock = clock

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self._live.current.timezone)

    async def listing(
        self, scope: str | None = None, now: datetime | None = None
    ) -> list[FollowUp]:
        """Every follow-up of `scope` (or of every chat) in any state, the oldest plan first."""
        at = now or self._clock.now()
        days = self._live.current.followup_window_days
        found: list[FollowUp] = []
        for row in await self.repo.plans(scope):
            followup = followup_of(_candidate(row), _recorded(row), at, self.zone, days)
            if followup is not None and row.record is not None:
                followup = replace(
                    followup, offers=row.record.offers, offered_day=row.record.offered_day
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
        now = self._clock.now()
        found = next((f for f in await self.listing(scope, now) if f.memory.id == memory_id), None)
        if found is None:
            raise NotFound(f"no follow-up of memory #{memory_id} in this chat")
        await self.repo.record(
            scope, memory_id, found.person, state, at=now, reason=reason, sent_text=sent_text
        )
        return found


def _candidate(row: PlanRow) -> Candidate:
    said = tuple(Said(at, text) for at, text in row.said)
    return Candidate(row.memory, row.told_first, row.told_last, row.superseded, said)


def _recorded(row: PlanRow) -> Recorded | None:
    state = row.record.state if row.record is not None else None
    return cast(Recorded, state) if state is not None else None
