"""The consolidation aggregate's SQL: cursors (two watermarks), batches, fragments.

Every state change of a batch is one `BEGIN IMMEDIATE` transaction that moves the
batch and its chat's cursor together, so a process killed at any instant leaves a
state `reconcile()` can repair. `acked_id` moves forward in exactly one place,
`acknowledge()`, in the same transaction that marks the batch done.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    String,
    and_,
    case,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.errors import BatchError, NotFound, StaleBatchRange
from memory_core.storage.archive import message_index
from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import consolidation_batches as B
from memory_core.storage.schema import consolidation_cursors as C
from memory_core.storage.schema import experiences as E
from memory_core.storage.schema import fragments as F
from memory_core.storage.types import UTCDateTime

OPEN_STATES = ("queued", "delivered", "processing")


@dataclass(frozen=True, slots=True)
class Pending:
    """What one chat has waiting behind its acknowledged watermark."""

    scope: str
    acked_id: int
    count: int
    oldest_at: datetime | None
    """When the oldest unacknowledged experience was archived (None when count is 0)."""
    failures: int = 0
    """Consecutive failed batches of this chat (0 after an acknowledgement)."""
    last_wake_at: datetime | None = None
    """When the chat last woke the bot (`chat_state`; None: never)."""


@dataclass(frozen=True, slots=True)
class Backlog:
    """What one chat has not had acknowledged yet: the backpressure people see."""

    scope: str
    messages: int
    chars: int
    oldest_at: datetime | None
    """When the oldest unacknowledged experience was archived (None when empty)."""

    def lag_s(self, now: datetime) -> float:
        """Seconds the oldest unacknowledged experience has waited (0 when empty)."""
        return 0.0 if self.oldest_at is None else max(0.0, (now - self.oldest_at).total_seconds())


@dataclass(frozen=True, slots=True)
class Cut:
    first_id: int
    last_id: int
    count: int
    chars: int


@dataclass(frozen=True, slots=True)
class Cursor:
    scope: str
    delivered_id: int
    acked_id: int
    consecutive_failures: int


@dataclass(frozen=True, slots=True)
class Batch:
    id: int
    scope: str
    first_id: int
    last_id: int
    message_count: int
    chars: int
    state: str
    outcome: str | None
    token: str
    attempts: int
    created_at: datetime
    delivered_at: datetime | None
    progressed_at: datetime | None
    finished_at: datetime | None
    error: str | None
    owner: str | None = None
    """The process running it, `host/boot/pid/start` (None before migration 0007)."""
    tool_calls: int = 0
    """The model's tool calls, recorded when the batch ends (0 before migration 0009)."""
    refused: int = 0
    """How many of those were refused (bad arguments, no evidence, an ended batch...)."""


@dataclass(frozen=True, slots=True)
class Fragment:
    id: int
    batch_id: int
    scope: str
    summary: str
    first_id: int
    last_id: int
    first_sent_at: datetime
    last_sent_at: datetime
    created_at: datetime
    archived: bool


@dataclass(frozen=True, slots=True)
class Failed:
    batch: Batch
    consecutive_failures: int


@dataclass(frozen=True, slots=True)
class CursorFix:
    scope: str
    delivered: tuple[int, int]
    acked: tuple[int, int]
    """(before, after) of each watermark."""


_PENDING_SQL = """
WITH RECURSIVE s(scope) AS (
    SELECT MIN(scope) FROM experiences
    UNION ALL
    SELECT (SELECT MIN(e.scope) FROM experiences e WHERE e.scope > s.scope)
    FROM s WHERE s.scope IS NOT NULL
)
SELECT s.scope AS scope,
       COALESCE(c.acked_id, 0) AS acked,
       COALESCE(c.consecutive_failures, 0) AS failures,
       (SELECT COUNT(*) FROM experiences e
         WHERE e.scope = s.scope AND e.id > COALESCE(c.acked_id, 0)) AS cnt,
       (SELECT e.received_at FROM experiences e
         WHERE e.scope = s.scope AND e.id > COALESCE(c.acked_id, 0)
         ORDER BY e.id LIMIT 1) AS oldest,
       w.last_wake_at AS woke
FROM s LEFT JOIN consolidation_cursors c ON c.scope = s.scope
       LEFT JOIN chat_state w ON w.scope = s.scope
WHERE s.scope IS NOT NULL
"""

_BACKLOG_SQL = """
WITH w(acked) AS (
    SELECT COALESCE((SELECT acked_id FROM consolidation_cursors WHERE scope = :scope), 0)
)
SELECT COUNT(*) AS cnt, COALESCE(SUM(LENGTH(e.text)), 0) AS chars,
       (SELECT o.received_at FROM experiences o, w
         WHERE o.scope = :scope AND o.id > w.acked ORDER BY o.id LIMIT 1) AS oldest
FROM experiences e, w
WHERE e.scope = :scope AND e.id > w.acked
"""


def _batch(row: Any) -> Batch:
    m = row._mapping
    return Batch(**{k: m[k] for k in Batch.__dataclass_fields__})


def fragment_of(row: Any) -> Fragment:
    """A `fragments` row (consolidation writes them; the nightly run reads them too)."""
    m = row._mapping
    return Fragment(**{k: m[k] for k in Fragment.__dataclass_fields__})


class ConsolidationRepo(Repository):
    # --- reads -------------------------------------------------------------------

    async def pending(
        self, scope: str | None = None, *, conn: AsyncConnection | None = None
    ) -> list[Pending]:
        """Per chat with archived experiences (or just `scope`): acked watermark, count
        behind it, oldest. The counts are only taken for the chats returned."""
        sql = text(_PENDING_SQL if scope is None else _PENDING_SQL + "AND s.scope = :scope")
        sql = sql.columns(
            scope=String,
            acked=Integer,
            failures=Integer,
            cnt=Integer,
            oldest=UTCDateTime,
            woke=UTCDateTime,
        )
        async with self.reading(conn) as conn:
            rows = (await conn.execute(sql, {} if scope is None else {"scope": scope})).all()
        return [Pending(r.scope, r.acked, r.cnt, r.oldest, r.failures, r.woke) for r in rows]

    async def backlog(self, scope: str, *, conn: AsyncConnection | None = None) -> Backlog:
        """Messages and characters behind the acknowledged watermark, and the oldest."""
        sql = text(_BACKLOG_SQL).columns(cnt=Integer, chars=Integer, oldest=UTCDateTime)
        async with self.reading(conn) as conn:
            row = (await conn.execute(sql, {"scope": scope})).one()
        return Backlog(scope, int(row.cnt), int(row.chars), row.oldest if row.cnt else None)

    async def cursor(self, scope: str, *, conn: AsyncConnection | None = None) -> Cursor:
        async with self.reading(conn) as conn:
            return await _cursor(conn, scope)

    async def batch(self, batch_id: int, *, conn: AsyncConnection | None = None) -> Batch:
        async with self.reading(conn) as conn:
            return await _get_batch(conn, batch_id)

    async def open_batches(self, *, conn: AsyncConnection | None = None) -> list[Batch]:
        async with self.reading(conn) as conn:
            rows = (await conn.execute(select(B).where(B.c.state.in_(OPEN_STATES)))).all()
        return [_batch(r) for r in rows]

    async def batches(
        self, scope: str | None = None, *, limit: int = 50, conn: AsyncConnection | None = None
    ) -> list[Batch]:
        """Newest first."""
        query = select(B).order_by(B.c.id.desc()).limit(limit)
        if scope is not None:
            query = query.where(B.c.scope == scope)
        async with self.reading(conn) as conn:
            return [_batch(r) for r in (await conn.execute(query)).all()]

    async def started_since(
        self, since: datetime, *, conn: AsyncConnection | None = None
    ) -> list[datetime]:
        async with self.reading(conn) as conn:
            rows = (await conn.execute(select(B.c.created_at).where(B.c.created_at > since))).all()
        return [r.created_at for r in rows]

    async def stale(self, before: datetime, *, conn: AsyncConnection | None = None) -> list[Batch]:
        """Open batches whose last sign of life is older than `before`."""
        last = func.coalesce(B.c.progressed_at, B.c.delivered_at, B.c.created_at)
        async with self.reading(conn) as conn:
            rows = (
                await conn.execute(select(B).where(B.c.state.in_(OPEN_STATES), last < before))
            ).all()
        return [_batch(r) for r in rows]

    async def fragments(
        self,
        scope: str,
        *,
        archived: bool | None = None,
        limit: int = 200,
        newest: bool = False,
        conn: AsyncConnection | None = None,
    ) -> list[Fragment]:
        """Oldest first: the first `limit`, or with `newest` the last `limit`."""
        order = F.c.id.desc() if newest else F.c.id
        query = select(F).where(F.c.scope == scope).order_by(order).limit(limit)
        if archived is not None:
            query = query.where(F.c.archived == archived)
        async with self.reading(conn) as conn:
            rows = [fragment_of(r) for r in (await conn.execute(query)).all()]
        return rows[::-1] if newest else rows

    # --- the state machine -------------------------------------------------------------

    async def create(
        self,
        scope: str,
        cut: Cut,
        token: str,
        now: datetime,
        *,
        owner: str | None = None,
        max_open: int = 1,
        conn: AsyncConnection | None = None,
    ) -> Batch | None:
        """Latch `cut` as a queued batch; None when `scope` has a batch open already, or
        `max_open` batches (of any chats, any process) are open. One transaction: two
        processes can never both open a batch in one chat, nor exceed the limit."""
        async with self.writing(conn) as conn:
            open_scopes = (
                await conn.execute(select(B.c.scope).where(B.c.state.in_(OPEN_STATES)))
            ).scalars()
            busy = list(open_scopes)
            if scope in busy or len(busy) >= max(1, max_open):
                return None
            cursor = await _cursor(conn, scope)
            if cut.first_id <= cursor.acked_id:
                raise StaleBatchRange(f"batch range {cut.first_id} starts at or before acked")
            await _refuse_gap(conn, scope, cursor.acked_id, cut.first_id)
            await conn.execute(
                upsert(conn, C)
                .values(scope=scope, updated_at=now)
                .on_conflict_do_nothing(index_elements=[C.c.scope])
            )
            earlier = await conn.scalar(
                select(func.count())
                .select_from(B)
                .where(B.c.scope == scope, B.c.first_id == cut.first_id)
            )
            result = await conn.execute(
                insert(B).values(
                    scope=scope,
                    first_id=cut.first_id,
                    last_id=cut.last_id,
                    message_count=cut.count,
                    chars=cut.chars,
                    state="queued",
                    token=token,
                    attempts=int(earlier or 0) + 1,
                    created_at=now,
                    progressed_at=now,
                    owner=owner,
                )
            )
            batch_id = result.inserted_primary_key[0] if result.inserted_primary_key else 0
            return await _get_batch(conn, int(batch_id))

    async def delivered(
        self, batch_id: int, now: datetime, *, conn: AsyncConnection | None = None
    ) -> Batch:
        """queued -> delivered, and the chat's `delivered` watermark to the batch end."""
        async with self.writing(conn) as conn:
            batch = await _transition(conn, batch_id, ("queued",), "delivered", now)
            await conn.execute(
                update(C)
                .where(C.c.scope == batch.scope)
                .values(delivered_id=_at_least(C.c.delivered_id, batch.last_id), updated_at=now)
            )
            return batch

    async def processing(
        self, batch_id: int, now: datetime, *, conn: AsyncConnection | None = None
    ) -> Batch:
        async with self.writing(conn) as conn:
            return await _transition(conn, batch_id, ("delivered",), "processing", now)

    async def touch(
        self, batch_id: int, now: datetime, *, conn: AsyncConnection | None = None
    ) -> bool:
        """Record progress; False when the batch has ended (watchdog, reconcile)."""
        async with self.writing(conn) as conn:
            result = await conn.execute(
                update(B)
                .where(B.c.id == batch_id, B.c.state.in_(OPEN_STATES))
                .values(progressed_at=now)
            )
        return result.rowcount == 1

    async def count_tools(
        self, batch_id: int, calls: int, refused: int, *, conn: AsyncConnection | None = None
    ) -> None:
        """Record how many tool calls the batch made and how many were refused."""
        async with self.writing(conn) as conn:
            await conn.execute(
                update(B).where(B.c.id == batch_id).values(tool_calls=calls, refused=refused)
            )

    async def acknowledge(
        self,
        batch_id: int,
        token: str,
        outcome: str,
        summary: str,
        now: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> int | None:
        """delivered|processing -> done; `acked` to the batch end; a fragment when
        something was extracted. Returns the fragment id."""
        async with self.writing(conn) as conn:
            batch = await _get_batch(conn, batch_id)
            if batch.token != token:
                raise BatchError("token does not belong to this batch")
            if batch.state not in ("delivered", "processing"):
                raise BatchError(f"batch is {batch.state}, not open for acknowledgement")
            cursor = await _cursor(conn, batch.scope)
            if cursor.acked_id >= batch.first_id:
                raise BatchError("acked watermark already covers this batch")
            await _refuse_gap(conn, batch.scope, cursor.acked_id, batch.first_id)
            await conn.execute(
                update(B)
                .where(B.c.id == batch_id)
                .values(state="done", outcome=outcome, finished_at=now, progressed_at=now)
            )
            await conn.execute(
                update(C)
                .where(C.c.scope == batch.scope)
                .values(
                    acked_id=batch.last_id,
                    delivered_id=_at_least(C.c.delivered_id, batch.last_id),
                    consecutive_failures=0,
                    updated_at=now,
                )
            )
            # Its messages stop being a recall source (message_search.py).
            await message_index.drop_acknowledged(conn, batch.scope, cursor.acked_id, batch.last_id)
            if outcome != "extracted":
                return None
            span = (
                await conn.execute(
                    select(func.min(E.c.sent_at), func.max(E.c.sent_at)).where(
                        E.c.scope == batch.scope, E.c.id.between(batch.first_id, batch.last_id)
                    )
                )
            ).one()
            first_sent = span[0] if span[0] is not None else now
            last_sent = span[1] if span[1] is not None else now
            result = await conn.execute(
                insert(F).values(
                    batch_id=batch_id,
                    scope=batch.scope,
                    summary=summary,
                    first_id=batch.first_id,
                    last_id=batch.last_id,
                    first_sent_at=first_sent,
                    last_sent_at=last_sent,
                    created_at=now,
                )
            )
            return int(result.inserted_primary_key[0]) if result.inserted_primary_key else None

    async def fail(
        self, batch_id: int, error: str, now: datetime, *, conn: AsyncConnection | None = None
    ) -> Failed | None:
        """open -> failed; `delivered` back to `acked`. None if it had already ended."""
        async with self.writing(conn) as conn:
            return await _fail(conn, batch_id, error, now)

    async def reconcile(
        self, now: datetime, *, conn: AsyncConnection | None = None
    ) -> tuple[list[Batch], list[CursorFix]]:
        """Start-up repair: fail every open batch, then for every cursor move
        `acked` back to the end of its last done batch (never forward) and
        `delivered` back to `acked`."""
        async with self.writing(conn) as conn:
            before = {
                r.scope: (r.delivered_id, r.acked_id) for r in (await conn.execute(select(C))).all()
            }
            open_ids = (
                await conn.execute(select(B.c.id).where(B.c.state.in_(OPEN_STATES)))
            ).scalars()
            failed: list[Batch] = []
            for batch_id in list(open_ids):
                outcome = await _fail(conn, batch_id, "interrupted: still open at start-up", now)
                if outcome is not None:
                    failed.append(outcome.batch)
            done_end = (
                select(B.c.scope, func.max(B.c.last_id).label("end"))
                .where(B.c.state == "done")
                .group_by(B.c.scope)
                .subquery()
            )
            rows = (
                await conn.execute(
                    select(C, done_end.c.end).outerjoin(done_end, done_end.c.scope == C.c.scope)
                )
            ).all()
            fixes: list[CursorFix] = []
            for row in rows:
                acked = min(row.acked_id, row.end or 0)
                if (acked, acked) != (row.acked_id, row.delivered_id):
                    await conn.execute(
                        update(C)
                        .where(C.c.scope == row.scope)
                        .values(acked_id=acked, delivered_id=acked, updated_at=now)
                    )
                delivered_was, acked_was = before.get(row.scope, (0, 0))
                if (delivered_was, acked_was) != (acked, acked):
                    fixes.append(CursorFix(row.scope, (delivered_was, acked), (acked_was, acked)))
            return failed, fixes


def _at_least(column: Any, value: int) -> ColumnElement[int]:
    """Portable max(column, value) (SQLite's two-argument max is not PostgreSQL's)."""
    return case((column > value, column), else_=value)


async def _refuse_gap(conn: AsyncConnection, scope: str, acked_id: int, first_id: int) -> None:
    """`acked` may only move over experiences the batch holds: none of this chat's
    may lie between the watermark and the batch's first id (a range latched from a
    stale watermark would otherwise mark them read)."""
    skipped = await conn.scalar(
        select(func.count())
        .select_from(E)
        .where(E.c.scope == scope, E.c.id > acked_id, E.c.id < first_id)
    )
    if skipped:
        raise BatchError(
            f"{skipped} unacknowledged experience(s) lie between acked #{acked_id} "
            f"and the batch start #{first_id}"
        )


async def _cursor(conn: AsyncConnection, scope: str) -> Cursor:
    row = (await conn.execute(select(C).where(C.c.scope == scope))).first()
    if row is None:
        return Cursor(scope, 0, 0, 0)
    return Cursor(row.scope, row.delivered_id, row.acked_id, row.consecutive_failures)


async def _get_batch(conn: AsyncConnection, batch_id: int) -> Batch:
    row = (await conn.execute(select(B).where(B.c.id == batch_id))).first()
    if row is None:
        raise NotFound(f"batch {batch_id}")
    return _batch(row)


async def _transition(
    conn: AsyncConnection, batch_id: int, sources: Sequence[str], target: str, now: datetime
) -> Batch:
    values: dict[str, Any] = {"state": target, "progressed_at": now}
    if target == "delivered":
        values["delivered_at"] = now
    result = await conn.execute(
        update(B).where(and_(B.c.id == batch_id, B.c.state.in_(sources))).values(**values)
    )
    if result.rowcount != 1:
        batch = await _get_batch(conn, batch_id)
        raise BatchError(f"batch {batch_id} is {batch.state}, cannot become {target}")
    return await _get_batch(conn, batch_id)


async def _fail(conn: AsyncConnection, batch_id: int, error: str, now: datetime) -> Failed | None:
    result = await conn.execute(
        update(B)
        .where(B.c.id == batch_id, B.c.state.in_(OPEN_STATES))
        .values(state="failed", error=error[:2000], finished_at=now, progressed_at=now)
    )
    if result.rowcount != 1:
        return None
    batch = await _get_batch(conn, batch_id)
    await conn.execute(
        update(C)
        .where(C.c.scope == batch.scope)
        .values(
            delivered_id=C.c.acked_id,
            consecutive_failures=C.c.consecutive_failures + 1,
            updated_at=now,
        )
    )
    cursor = await _cursor(conn, batch.scope)
    return Failed(batch, cursor.consecutive_failures)
