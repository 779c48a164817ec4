"""What is due (pure: no I/O, no clock): which memories are follow-ups, their date and
window, and where each one stands at a given instant.

A follow-up is a member's own dated plan: an `event` or a `state` about a person (not
the chat, the bot or a thing), resting on their own word (`self` or `self-only`; hearsay
is never asked about, since the persona would be asking someone about what another
member said of them), active and not superseded, with a date, told on or before that
date. The date is the event's `valid_from` or the state's `valid_to`, read as a local
day in the chat's zone. It is due from the day after that day for `window_days` days,
then expired for good: last month's plan never comes back as if it were tomorrow.

"Told on or before": the earliest cited message (the bot's lines count for no one) was
sent before the date's instant, or, for a date with no time of day (local midnight: a
day is all the model knew), on or before that day. A past event told afterwards
("昨天面试了") is not a plan. When the person's own cited words go on after the day, they
have told how it went already: `answered`.

When the date consolidation first wrote disagrees with the days the cited words name
(dates.py), no follow-up is made: `refused`; a later change of the date (the nightly
`states` step extending a state, an edit) is trusted and moves the follow-up with it,
and a state ended before its planned end (resolved early) has been told of: `answered`.
The nightly `settle` step rewrites a past state's text in place: same memory, same
follow-up. What was done about a follow-up (asked, answered, dropped) is
recorded by the caller and passed in; due, upcoming and expired are never stored, only computed, so a
retracted, superseded or forgotten memory ends its follow-up at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from memory_core.types import Memory

from .dates import Said, agrees

Recorded = Literal["asked", "answered", "dropped", "refused"]
"""What the store says was done: asked (in passing or unprompted), answered (the person
spoke of it), dropped (an admin's `/followups drop`), refused (no follow-up is made:
the model's date disagreed with the words it cites, found when the list is read)."""
State = Literal["upcoming", "due", "expired", "asked", "answered", "dropped", "refused"]
PLAN_TYPES = frozenset({"event", "state"})
OWN_WORD = frozenset({"self", "self-only"})


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory with what its evidence says about when it was told."""

    memory: Memory
    told_first: datetime | None
    """The earliest cited message of anyone but the bot; None: no cited message."""
    told_last: datetime | None = None
    """The latest cited message of the memory's person (their own words)."""
    superseded: bool = False
    """A newer memory supersedes it."""
    said: tuple[Said, ...] = ()
    """The cited messages' words (not the bot's), to check the date against (dates.py)."""
    first: Memory | None = None
    """The memory as first written: the date its words are checked against, and a state
    that ended before it was planned to has been told of already."""


@dataclass(frozen=True, slots=True)
class Window:
    day: date
    """The plan's local day."""
    first: date
    """The first local day it is due."""
    last: date
    """The last local day it is due (included)."""


@dataclass(frozen=True, slots=True)
class FollowUp:
    memory: Memory
    person: str
    """The member's user id on the chat's platform."""
    window: Window
    state: State
    offers: int = 0
    """Local days it was offered in a reply prompt (asked in passing if cited)."""
    offered_day: str | None = None
    """The last of those days (`YYYY-MM-DD`)."""
    asked_at: datetime | None = None
    sent_text: str | None = None
    """What was sent unprompted (None: asked in passing, or not asked)."""


def date_of(memory: Memory) -> datetime | None:
    """The instant a plan is dated by: an event's start, a state's end."""
    if memory.type == "event":
        return memory.valid_from
    if memory.type == "state":
        return memory.valid_to
    return None


def local_day(instant: datetime, zone: ZoneInfo) -> date:
    return instant.astimezone(zone).date()


DAY_END = time(4, 0)
"""The nightly cutoff's default: a day's events run until then (YUJI_NIGHTLY_TIME)."""


def plan_day(memory: Memory, at: datetime, zone: ZoneInfo, cutoff: time = DAY_END) -> date:
    """The local day a plan is dated: `at`'s, but a state ending after midnight and by
    the nightly cutoff ended with the day before (the nightly run closes a state "until
    the 27th" at the 28th's cutoff)."""
    local = at.astimezone(zone)
    if memory.type == "state" and time(0) < local.time() <= cutoff:
        return local.date() - timedelta(days=1)
    return local.date()


def window_of(at: datetime, zone: ZoneInfo, window_days: int) -> Window:
    return window_from(local_day(at, zone), window_days)


def window_from(day: date, window_days: int) -> Window:
    return Window(day, day + timedelta(days=1), day + timedelta(days=max(1, window_days)))


def told_before(told: datetime, at: datetime, zone: ZoneInfo) -> bool:
    """Whether words said at `told` came before the plan dated `at` (module docstring)."""
    if at.astimezone(zone).time() == time(0):
        return local_day(told, zone) <= local_day(at, zone)
    return told < at


def is_followup(candidate: Candidate, zone: ZoneInfo) -> bool:
    memory = candidate.memory
    at = date_of(memory)
    return (
        memory.type in PLAN_TYPES
        and memory.status == "active"
        and memory.subject_kind == "person"
        and bool(memory.subject_person)
        and memory.word in OWN_WORD
        and not candidate.superseded
        and at is not None
        and candidate.told_first is not None
        and told_before(candidate.told_first, at, zone)
    )


def followup_of(
    candidate: Candidate,
    recorded: Recorded | None,
    now: datetime,
    zone: ZoneInfo,
    window_days: int,
    cutoff: time = DAY_END,
) -> FollowUp | None:
    """Where the candidate's follow-up stands at `now`; None: it is not a follow-up."""
    memory = candidate.memory
    at = date_of(memory)
    if at is None or not is_followup(candidate, zone):
        return None
    day = plan_day(memory, at, zone, cutoff)
    window = window_from(day, window_days)
    person = memory.subject_person or ""
    first = candidate.first or memory
    planned = plan_day(first, date_of(first) or at, zone, cutoff)
    if recorded != "dropped" and agrees(first, planned, candidate.said, zone) is False:
        return FollowUp(memory, person, window, "refused")
    if memory.type == "state" and day < planned:
        return FollowUp(memory, person, window, "answered")  # ended early
    return FollowUp(
        candidate.memory, person, window, _state(candidate, recorded, window, now, zone)
    )


def _state(
    candidate: Candidate, recorded: Recorded | None, window: Window, now: datetime, zone: ZoneInfo
) -> State:
    if recorded in ("dropped", "refused", "answered"):
        return recorded
    told_last = candidate.told_last
    if told_last is not None and local_day(told_last, zone) > window.day:
        return "answered"
    if recorded == "asked":
        return "asked"
    today = local_day(now, zone)
    if today < window.first:
        return "upcoming"
    if today > window.last:
        return "expired"
    return "due"


MAX_OFFERS = 3
"""Days a follow-up is offered in passing before it is left alone."""


def pick_offer(due: list[FollowUp], person: str, today: date) -> FollowUp | None:
    """The one follow-up of `person` a reply to them may carry today: theirs, due, offered
    on fewer than MAX_OFFERS days (or already today: the same day counts once); the
    oldest plan first (its window closes first)."""
    day = today.isoformat()
    mine = [
        f
        for f in due
        if f.person == person
        and f.state == "due"
        and (f.offers < MAX_OFFERS or f.offered_day == day)
    ]
    return min(mine, key=lambda f: (f.window.day, f.memory.id), default=None)


def due_list(
    candidates: list[tuple[Candidate, Recorded | None]],
    now: datetime,
    zone: ZoneInfo,
    window_days: int,
) -> list[FollowUp]:
    """The follow-ups due at `now`, the oldest plan first (its window closes first)."""
    found = [followup_of(c, recorded, now, zone, window_days) for c, recorded in candidates]
    due = [f for f in found if f is not None and f.state == "due"]
    return sorted(due, key=lambda f: (f.window.day, f.memory.id))
