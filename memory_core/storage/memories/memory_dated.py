"""MemoryRepo's reads by date: the memories of a chat dated on a span of days (recall's
dated candidates, memory_core/recall/dated.py).

A memory is dated on [start, end) when its validity starts in it, when a bounded
validity overlaps it, or when one of its evidence messages was sent in it. An
open-ended validity that began before the span is not "dated" on it: every long-held
fact would be. Every read applies the visibility rule (memory_sql.visible) and stays
inside the chat (a message of another chat is never joined: the scope is checked on
the message and on the memory).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import ColumnElement, and_, or_, select, union_all
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.clock import as_utc
from memory_core.storage.schema import experiences, memories, memory_evidence

from . import memory_sql as sql
from .memory_reads import MemoryReads
from .memory_sql import m

e = experiences.c
ev = memory_evidence.c


class MemoryDated(MemoryReads):
    async def dated_candidates(
        self,
        scope: str,
        start: datetime,
        end: datetime,
        now: datetime,
        *,
        with_past: bool,
        limit: int,
        conn: AsyncConnection | None = None,
    ) -> list[int]:
        """The ids of at most `limit` memories visible at `now` (`with_past`: also
        those whose validity ended) dated on [start, end), latest first by the instant
        that dates each (the evidence message's time or the validity's start). Ids
        alone: recall reads the memories with its other candidates, in one statement."""
        start, end = as_utc(start), as_utc(end)
        visible = sql.visible(scope, now, retrospective=with_past)
        latest: dict[int, datetime] = {}
        async with self.reading(conn) as c:
            by_evidence = (
                select(m.id, e.sent_at.label("dated_at"))
                .join_from(experiences, memory_evidence, ev.experience_id == e.id)
                .join(memories, m.id == ev.memory_id)
                .where(e.scope == scope, e.sent_at >= start, e.sent_at < end, visible)
                .order_by(e.sent_at.desc(), m.id)
                .limit(limit * 3)
            )
            # One statement per way of being dated, each a range of one index (an OR
            # of the two is planned as a walk through every memory of the chat).
            by_validity = [
                select(m.id, m.valid_from.label("dated_at"))
                .where(visible, on_span)
                .order_by(m.valid_from.desc(), m.id)
                .limit(limit)
                for on_span in _validity_ways(start, end)
            ]
            # One round trip: each way keeps its own order and limit inside the union.
            ways = union_all(*(q.subquery().select() for q in (by_evidence, *by_validity)))
            for row in await c.execute(ways):
                at = as_utc(row.dated_at)
                if row.id not in latest or latest[row.id] < at:
                    latest[row.id] = at
        ordered = sorted(latest.items(), key=lambda pair: (-pair[1].timestamp(), pair[0]))
        return [memory_id for memory_id, _ in ordered[:limit]]

    async def dated_among(
        self,
        scope: str,
        ids: Iterable[int],
        start: datetime,
        end: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> frozenset[int]:
        """Which of this chat's memories `ids` are dated on [start, end)."""
        wanted = sorted(set(ids))
        if not wanted:
            return frozenset()
        start, end = as_utc(start), as_utc(end)
        async with self.reading(conn) as c:
            by_validity = select(m.id).where(
                m.scope == scope, m.id.in_(wanted), _validity_on(start, end)
            )
            by_evidence = (
                select(ev.memory_id)
                .join_from(memory_evidence, experiences, ev.experience_id == e.id)
                .where(
                    e.scope == scope,
                    ev.memory_id.in_(wanted),
                    e.sent_at >= start,
                    e.sent_at < end,
                )
            )
            found = (await c.execute(union_all(by_validity, by_evidence))).scalars()
            return frozenset(int(i) for i in found)


def _validity_ways(start: datetime, end: datetime) -> tuple[ColumnElement[bool], ...]:
    """Validity starts in [start, end); a bounded validity overlaps it."""
    return (
        and_(m.valid_from >= start, m.valid_from < end),
        and_(m.valid_to.is_not(None), m.valid_to > start, m.valid_from < end),
    )


def _validity_on(start: datetime, end: datetime) -> ColumnElement[bool]:
    return or_(*_validity_ways(start, end))
