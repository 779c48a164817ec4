"""Day buckets in the configured zone, with `<= cutoff` semantics.

Day `D` is the half-open interval `(end(D - 1), end(D)]`, where `end(D)` is the
instant the local wall clock of the zone shows the cutoff (default 04:00) on the
calendar day after `D`. Chat at 01:30 on the 21st belongs to the 20th; a message sent
at exactly 04:00:00 still belongs to the day that ends then. Consecutive ends are
strictly increasing even across offset changes, so every instant falls into exactly
one day and none falls between two.

Everything here is pure: no clock, no I/O.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from memory_core.clock import as_utc

ONE_DAY = timedelta(days=1)


def parse_cutoff(text: str) -> time:
    """`"04:00"` -> `time(4, 0)`; anything else is refused, not guessed."""
    hours, sep, minutes = text.strip().partition(":")
    if not sep or not hours.isdigit() or not minutes.isdigit():
        raise ValueError(f"cutoff {text!r} is not HH:MM")
    return time(int(hours), int(minutes))


def day_end(day: date, tz: ZoneInfo, cutoff: time) -> datetime:
    """The last instant (inclusive) of `day`, in UTC.

    A cutoff that does not exist on the wall clock that night (a spring-forward gap)
    resolves with the offset before the change (PEP 495 `fold=0`), which keeps the
    ends strictly increasing.
    """
    local = datetime.combine(day + ONE_DAY, cutoff, tzinfo=tz)
    return local.astimezone(UTC)


def day_start(day: date, tz: ZoneInfo, cutoff: time) -> datetime:
    """The instant (exclusive) the day starts after, in UTC: the end of the day before."""
    return day_end(day - ONE_DAY, tz, cutoff)


def day_of(instant: datetime, tz: ZoneInfo, cutoff: time) -> date:
    """The one day whose interval `(start, end]` holds `instant`."""
    utc = as_utc(instant)
    guess = utc.astimezone(tz).date()
    while utc <= day_end(guess - ONE_DAY, tz, cutoff):
        guess -= ONE_DAY
    while utc > day_end(guess, tz, cutoff):
        guess += ONE_DAY
    return guess


def last_complete_day(now: datetime, tz: ZoneInfo, cutoff: time) -> date:
    """The latest day whose end is not after `now`: what the run at the cutoff handles."""
    current = day_of(now, tz, cutoff)
    return current if day_end(current, tz, cutoff) <= as_utc(now) else current - ONE_DAY


def days_between(first: date, last: date) -> list[date]:
    """Every day from `first` to `last` inclusive, in order (empty when first > last)."""
    count = (last - first).days + 1
    return [first + timedelta(days=i) for i in range(max(count, 0))]


def pending_days(
    *,
    last_done: date | None,
    oldest_material: date | None,
    latest: date,
    max_days: int,
) -> list[date]:
    """The days a run must handle, oldest first.

    After downtime every missed day since the last finished one is caught up in order;
    a scope that never ran starts at the day of its oldest unhandled material (or at
    `latest`). At most `max_days` days, the most recent ones.
    """
    if last_done is not None:
        first = last_done + ONE_DAY
    elif oldest_material is not None:
        first = min(oldest_material, latest)
    else:
        first = latest
    days = days_between(first, latest)
    return days[-max_days:] if max_days > 0 else []


def parse_day(text: str) -> date:
    """`"2026-11-20"` -> a date; anything else raises ValueError."""
    return date.fromisoformat(text.strip())
