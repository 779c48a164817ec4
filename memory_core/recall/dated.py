"""A day named is a day searched: the memories dated on the day or days a wake names
(when.py), as recall's dated candidates and its `dated` feature.

The memory repository finds them (storage/memories/memory_dated.py: validity starting
in the span or a bounded validity overlapping it, or an evidence message sent in it),
inside the visibility rule and the chat; the engine checks every row once more.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage import MemoryRepo

from .when import Span

LIMIT = 30
"""Dated candidates taken (the latest on the span first)."""


@dataclass(frozen=True, slots=True)
class Day:
    ids: tuple[int, ...] = ()
    """The memories dated on the named day, latest first (at most LIMIT)."""
    on_day: frozenset[int] = frozenset()
    """Which of every candidate (these and the other sources') are dated on it."""
    note: tuple[str, ...] = ()
    """The trace line (none when the wake names no day)."""


async def search(
    repo: MemoryRepo,
    conn: AsyncConnection,
    scope: str,
    span: Span | None,
    now: datetime,
    with_past: bool,
    known: Iterable[int],
    *,
    limit: int = LIMIT,
) -> Day:
    """The memories of `scope` visible at `now` (`with_past`: also ended ones) dated on
    `span`, and which of them and of the candidates `known` are dated on it."""
    if span is None:
        return Day()
    rows = await repo.dated_candidates(
        scope, span.start, span.end, now, with_past=with_past, limit=limit, conn=conn
    )
    ids = tuple(memory.id for memory, _ in rows)
    others = set(known).difference(ids)  # the dated ones are dated: not asked again
    on_day = frozenset(ids) | await repo.dated_among(scope, others, span.start, span.end, conn=conn)
    note = f"names a day: {span.said} -> {len(ids)} dated, {len(on_day)} candidates on it"
    return Day(ids, on_day, (note,))
