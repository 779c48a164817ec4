"""A day named is a day searched: the memories dated on the day or days a wake names
(when.py), as recall's dated candidates and its `dated` feature.

The memory repository finds them (storage/memories/memory_dated.py: validity starting
in the span or a bounded validity overlapping it, or an evidence message sent in it),
inside the visibility rule and the chat; the engine checks every row once more.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage import MemoryRepo

from .when import Span

LIMIT = 30
"""Dated candidates taken (the latest on the span first)."""


@dataclass(frozen=True, slots=True)
class Day:
    span: Span | None = None
    ids: tuple[int, ...] = ()
    """The memories dated on the named day, latest first (at most LIMIT)."""
    on_day: frozenset[int] = frozenset()
    """Which of every candidate (these and the other sources') are dated on it."""

    @property
    def note(self) -> tuple[str, ...]:
        """The trace line (none when the wake names no day)."""
        if self.span is None:
            return ()
        return (
            f"names a day: {self.span.said} -> {len(self.ids)} dated, "
            f"{len(self.on_day)} candidates on it",
        )


async def search(
    repo: MemoryRepo,
    conn: AsyncConnection,
    scope: str,
    span: Span | None,
    now: datetime,
    with_past: bool,
    *,
    limit: int = LIMIT,
) -> Day:
    """The memories of `scope` visible at `now` (`with_past`: also ended ones) dated on
    `span` (it needs no other source: recall runs it while the question's vector is
    being computed)."""
    if span is None:
        return Day()
    ids = await repo.dated_candidates(
        scope, span.start, span.end, now, with_past=with_past, limit=limit, conn=conn
    )
    return Day(span, tuple(ids), frozenset(ids))


async def marked(
    repo: MemoryRepo, conn: AsyncConnection, scope: str, day: Day, known: Iterable[int]
) -> Day:
    """`day` with which of the other sources' candidates `known` are dated on it too."""
    if day.span is None:
        return day
    others = set(known).difference(day.ids)  # the dated ones are dated: not asked again
    among = await repo.dated_among(scope, others, day.span.start, day.span.end, conn=conn)
    return replace(day, on_day=day.on_day | among)
