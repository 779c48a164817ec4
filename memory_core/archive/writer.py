"""The group-commit writer: many concurrent `append`s, one transaction per burst.

Callers enqueue and await their own future; one writer task drains the queue, up to
`max_batch` rows per transaction. While a transaction is open the next burst gathers,
so the commit rate adapts to the load instead of paying one fsync per message. A
batch the database refuses is retried row by row, so one bad row fails alone and
never loses the rest.

The queue is bounded (`capacity`): `put` waits for room, which is the backpressure
the live ingest passes on to the client (it stops reading the socket), so memory
stays flat however fast a client sends. Waiting is never silent: the first wait, and
then one line a minute, says how many waited. `drain` writes what is queued within a
deadline and reports, by chat, what it could not.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memory_core.errors import ArchiveClosed
from memory_core.log_throttle import LogThrottle, repeats
from memory_core.storage import Appended
from memory_core.types import NewExperience

log = logging.getLogger("yuji.archive")

FULL_REPORT_S = 60.0
"""A full queue is reported at most once per this many seconds, with counts."""

InsertMany = Callable[[Sequence[NewExperience], Sequence[datetime]], Awaitable[list[Appended]]]


@dataclass(slots=True)
class _Pending:
    exp: NewExperience
    received_at: datetime
    future: asyncio.Future[Appended]


@dataclass(frozen=True, slots=True)
class DrainReport:
    drained: int
    """Rows written while draining."""
    left: dict[str, int] = field(default_factory=dict[str, int])
    """Chat scope -> messages still queued when the deadline passed."""

    @property
    def lost(self) -> int:
        return sum(self.left.values())


class GroupCommitWriter:
    def __init__(
        self,
        insert_many: InsertMany,
        *,
        max_batch: int = 500,
        capacity: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._insert_many = insert_many
        self._max_batch = max(1, max_batch)
        self.capacity = max(self._max_batch, capacity)
        self._queue: deque[_Pending] = deque()
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._room = asyncio.Event()
        self._room.set()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._full_log = LogThrottle(FULL_REPORT_S, clock=clock)
        self.batches = 0
        """Transactions committed so far (for tests and the benchmark)."""
        self.written = 0
        """Rows the writer handed to the database and saw committed."""
        self.waited = 0
        """`put`s that found the queue full and waited for room."""
        self.on_commit: list[Callable[[], None]] = []
        """Called after each committed transaction (consolidation wakes on new work)."""

    @property
    def depth(self) -> int:
        """Messages queued and not yet committed (the batch in flight excluded)."""
        return len(self._queue)

    async def put(self, exp: NewExperience, received_at: datetime) -> asyncio.Future[Appended]:
        """Queue one row, waiting while the queue is full; the future settles on commit."""
        if len(self._queue) >= self.capacity:
            self.waited += 1
            held = self._full_log.allow("full")
            if held is not None:
                log.warning(
                    "archive queue full (%d queued, capacity %d): reading from the client "
                    "pauses until the writer catches up; %d waits so far%s",
                    len(self._queue),
                    self.capacity,
                    self.waited,
                    repeats(held),
                )
            while len(self._queue) >= self.capacity and not self._closed:
                self._room.clear()
                await self._room.wait()
        if self._closed:
            raise ArchiveClosed("the archive writer is closed")
        return self._queued(exp, received_at)

    def offer(self, exp: NewExperience, received_at: datetime) -> asyncio.Future[Appended] | None:
        """`put` for a caller that cannot wait (a synchronous hook): None when the queue
        is full or closed, and the caller archives it the waiting way instead."""
        if self._closed or len(self._queue) >= self.capacity:
            return None
        return self._queued(exp, received_at)

    def _queued(self, exp: NewExperience, received_at: datetime) -> asyncio.Future[Appended]:
        future: asyncio.Future[Appended] = asyncio.get_running_loop().create_future()
        self._queue.append(_Pending(exp, received_at, future))
        self._idle.clear()
        self._wakeup.set()
        self._ensure_task()
        return future

    async def submit(self, exp: NewExperience, received_at: datetime) -> Appended:
        future = await self.put(exp, received_at)
        # A cancelled caller must not cancel the write: the message is still archived.
        return await asyncio.shield(future)

    async def drain(self, timeout_s: float) -> DrainReport:
        """Write what is queued within `timeout_s`; what is left is reported by chat,
        failed (`ArchiveClosed`) for its callers, and the writer closes."""
        before = self.written
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.flush(), max(0.0, timeout_s))
        await self._stop_task()
        self._closed = True
        self._room.set()
        left = Counter(p.exp.scope for p in self._queue if not p.future.done())
        for pending in self._queue:
            if not pending.future.done():
                pending.future.set_exception(ArchiveClosed("not archived before shutdown"))
                pending.future.exception()  # retrieved: the report says it
        self._queue.clear()
        self._idle.set()
        return DrainReport(self.written - before, dict(left))

    async def flush(self) -> None:
        """Return once everything submitted before this call is committed."""
        while self._queue or not self._idle.is_set():
            if self._queue:
                self._idle.clear()  # set by a cancelled task that left rows behind
            self._ensure_task()
            await self._idle.wait()

    async def close(self) -> None:
        await self.flush()
        self._closed = True
        self._room.set()
        await self._stop_task()

    async def _stop_task(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def _ensure_task(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="yuji-archive-writer"
            )

    async def _run(self) -> None:
        while True:
            if not self._queue:
                self._idle.set()
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            batch = [self._queue.popleft() for _ in range(min(self._max_batch, len(self._queue)))]
            if len(self._queue) < self.capacity:
                self._room.set()
            try:
                await self._write(batch)
            except asyncio.CancelledError:
                # Cancelled mid-transaction (shutdown): the rows go back to the head of
                # the queue for the next writer task (dedup makes a replay harmless),
                # and a waiting flush() wakes up to start that task.
                self._queue.extendleft(reversed([p for p in batch if not p.future.done()]))
                self._idle.set()
                raise
            except Exception as exc:  # a bug past the insert: fail the callers, never hang them
                log.exception("archive writer failed on a batch of %d", len(batch))
                for pending in batch:
                    _settle_error(pending, exc)

    async def _write(self, batch: list[_Pending]) -> None:
        try:
            results = await self._insert_many(
                [p.exp for p in batch], [p.received_at for p in batch]
            )
        except Exception as exc:
            if len(batch) == 1:
                _settle_error(batch[0], exc)
                return
            log.warning("archive batch of %d refused (%s); retrying row by row", len(batch), exc)
            for pending in batch:
                await self._write([pending])
            return
        self.batches += 1
        self.written += len(batch)
        for listener in self.on_commit:
            try:
                listener()
            except Exception:  # a listener must never fail the write
                log.exception("archive commit listener failed")
        for pending, result in zip(batch, results, strict=True):
            if not pending.future.done():
                pending.future.set_result(result)


_REFUSED_LOG = LogThrottle(FULL_REPORT_S)


def _settle_error(pending: _Pending, exc: Exception) -> None:
    held = _REFUSED_LOG.allow(type(exc).__name__)
    if held is not None:
        log.error(
            "archive refused %s/%s: %s%s",
            pending.exp.scope,
            pending.exp.fingerprint,
            exc,
            repeats(held),
        )
    if not pending.future.done():
        pending.future.set_exception(exc)
