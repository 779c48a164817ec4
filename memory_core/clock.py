"""Time as an injected dependency: instants are always timezone-aware UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, timezone-aware, in UTC."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FakeClock:
    """A clock tests move by hand."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("FakeClock needs a timezone-aware start")
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, delta: timedelta) -> None:
        self._now += delta

    def set(self, instant: datetime) -> None:
        self._now = instant.astimezone(UTC)


def as_utc(value: datetime) -> datetime:
    """Normalise an aware instant to UTC; naive values are refused, not guessed."""
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: instants must carry a timezone")
    return value.astimezone(UTC)
