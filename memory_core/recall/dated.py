"""A day named is a day searched: the memories dated on the day or days a wake names
(when.py), as recall's dated candidates and its `dated` feature.

The memory repository finds them (storage/memories/memory_dated.py: validity starting
in the span or a bounded validity overlapping it, or an evidence message sent in it),
inside the visibility rule and the chat; the engine checks every row once more.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage import MemoryRepo

from .when import Span

LIMIT = 30
"""Dated candidates taken (the latest on the span first)."""


async def candidates(
    repo: MemoryRepo,
    conn: AsyncConnection,
    scope: str,
    span: Span | None,
    now: datetime,
    *,
    with_past: bool,
    limit: int = LIMIT,
) -> list[int]:
    """The ids of at most `limit` memories of `scope` visible at `now` dated on `span`."""
    if span is None:
        return []
    rows = await repo.dated_candidates(
        scope, span.start, span.end, now, with_past=with_past, limit=limit, conn=conn
    )
    return [memory.id for memory, _ in rows]


async def among(
    repo: MemoryRepo, conn: AsyncConnection, scope: str, span: Span | None, ids: Iterable[int]
) -> frozenset[int]:
    """Which of the candidates `ids` are dated on `span` (none when the wake names no day)."""
    if span is None:
        return frozenset()
    return await repo.dated_among(scope, ids, span.start, span.end, conn=conn)
