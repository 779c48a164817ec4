"""The group-commit writer: many concurrent `append`s, one transaction per burst.

Callers enqueue and await their own future; one writer task drains the queue, up to
`max_batch` rows per transaction. While a transaction is open the next burst gathers,
so the commit rate adapts to the load instead of paying one fsync per message. And
before a transaction of fewer than `max_batch` rows the writer waits up to `gather_s`
for more: a transaction costs the process about 6 ms of CPU whatever it holds (its
statements' round trips between the event loop and the database thread), so messages
arriving one by one at a few hundred a second, each committed alone, would cost more
than everything else the bot does with them (docs/plugin.md,
benchmarks/archive_gather.py). The wait ends as soon as someone waits for a row
(`submit`: our own send, a command; `hurry`: a wake; `flush`, `drain`): only the live
ingest's rows that nobody waits for (`put`, `offer`) are stored up to `gather_s` later.

A refused batch is classified (`storage.failures.write_failure`). When the store
failed (unreachable, busy, full, I/O), the batch goes back to the head of the queue,
in order, and is tried again with a growing pause (`RETRY_FIRST_S` to `RETRY_MAX_S`)
until the store takes it: nothing is dropped for an outage or a full disk, and the
messages arriving meanwhile queue behind it. When the rows may be at fault, the
batch is retried row by row, so a bad row fails alone: it is dropped (counted in
`drops`, its chat's gap kept for the backfill), the rest written. A row failing for
a reason that cannot be told is tried `UNKNOWN_TRIES` times before it is dropped.

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
from memory_core.storage.failures import WriteFailure, write_failure
from memory_core.types import NewExperience

from .drops import ArchiveHealth, Drop, DropLog

log = logging.getLogger("yuji.archive")

FULL_REPORT_S = 60.0
"""A full queue is reported at most once per this many seconds, with counts."""

RETRY_FIRST_S = 0.1
RETRY_MAX_S = 2.0
"""The pause between tries of a batch the store refused grows from the first to this."""
UNKNOWN_TRIES = 3
"""Tries of a row refused for a reason `write_failure` cannot tell before it is dropped."""

InsertMany = Callable[[Sequence[NewExperience], Sequence[datetime]], Awaitable[list[Appended]]]


@dataclass(slots=True)
class _Pending:
    exp: NewExperience
    received_at: datetime
    future: asyncio.Future[Appended]
    tries: int = 0


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
        gather_s: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
        classify: Callable[[BaseException], WriteFailure] = write_failure,
        retry_first_s: float = RETRY_FIRST_S,
        retry_max_s: float = RETRY_MAX_S,
    ) -> None:
        self._insert_many = insert_many
        self._classify = classify
        self._clock = clock
        self._retry_first_s = retry_first_s
        self._retry_max_s = max(retry_first_s, retry_max_s)
        self._delay = retry_first_s
        self._held_since: float | None = None
        self._held_log = LogThrottle(FULL_REPORT_S, clock=clock)
        self.last_error = ""
        """The store's last refusal (while it refuses)."""
        self.outages = 0
        """Times the store started refusing writes (each healed by itself or pending)."""
        self.drops = DropLog()
        """Rows given up on: a reason retrying cannot cure (see the module docstring)."""
        self._max_batch = max(1, max_batch)
        self._gather_s = max(0.0, gather_s)
        self.capacity = max(self._max_batch, capacity)
        self._queue: deque[_Pending] = deque()
        self._wakeup = asyncio.Event()
        self._hurry = asyncio.Event()
        """Set while a caller waits for a queued row (`submit`, `flush`): the writer
        commits without gathering."""
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

    @property
    def held_s(self) -> float | None:
        """How long the store has refused this writer's batches (None: it takes them)."""
        return None if self._held_since is None else self._clock() - self._held_since

    def health(self) -> ArchiveHealth:
        return ArchiveHealth(
            queued=len(self._queue),
            capacity=self.capacity,
            held_s=self.held_s,
            last_error=self.last_error,
            outages=self.outages,
            dropped=self.drops.total,
            dropped_by_reason=tuple(sorted(self.drops.by_reason.items())),
        )

    async def put(
        self, exp: NewExperience, received_at: datetime, *, awaited: bool = False
    ) -> asyncio.Future[Appended]:
        """Queue one row, waiting while the queue is full; the future settles on commit
        (`awaited`: the caller waits for it, so the writer commits without gathering)."""
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
        return self._queued(exp, received_at, awaited=awaited)

    def offer(self, exp: NewExperience, received_at: datetime) -> asyncio.Future[Appended] | None:
        """`put` for a caller that cannot wait (a synchronous hook): None when the queue
        is full or closed, and the caller archives it the waiting way instead."""
        if self._closed or len(self._queue) >= self.capacity:
            return None
        return self._queued(exp, received_at)

    def _queued(
        self, exp: NewExperience, received_at: datetime, *, awaited: bool = False
    ) -> asyncio.Future[Appended]:
        future: asyncio.Future[Appended] = asyncio.get_running_loop().create_future()
        self._queue.append(_Pending(exp, received_at, future))
        if awaited:
            self._hurry.set()
        self._idle.clear()
        self._wakeup.set()
        self._ensure_task()
        return future

    async def submit(self, exp: NewExperience, received_at: datetime) -> Appended:
        future = await self.put(exp, received_at, awaited=True)
        # A cancelled caller must not cancel the write: the message is still archived.
        return await asyncio.shield(future)

    def hurry(self) -> None:
        """A caller waits for a row it queued without waiting (`put`, `offer`): the
        writer commits what is queued without gathering more."""
        if self._queue:
            self._hurry.set()

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
        """Return once everything submitted before this call is committed (without
        gathering: the caller waits)."""
        self._hurry.set()
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
            await self._gather()  # cancelled there: nothing taken yet
            batch = [self._queue.popleft() for _ in range(min(self._max_batch, len(self._queue)))]
            if not self._queue:  # what is left (a full batch's worth) goes without gathering
                self._hurry.clear()
            # While the store refuses, the batch in flight still counts against the
            # bound: it comes back to the queue if refused again.
            if self._held_since is None and len(self._queue) < self.capacity:
                self._room.set()
            try:
                held, error = await self._write(batch)
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
                    if not pending.future.done():
                        self._refused(pending, exc, "row")
                continue
            if error is None:
                self._healed()
                if len(self._queue) < self.capacity:
                    self._room.set()
                continue
            # The store refused: the rows wait at the head of the queue, in order.
            self._queue.extendleft(reversed(held))
            try:
                await self._pause(error)
            except asyncio.CancelledError:
                self._idle.set()
                raise

    async def _gather(self) -> None:
        """Wait up to `gather_s` for more rows, unless the batch is full or awaited."""
        if not self._gather_s or len(self._queue) >= self._max_batch or self._hurry.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._hurry.wait(), self._gather_s)

    async def _write(self, batch: list[_Pending]) -> tuple[list[_Pending], BaseException | None]:
        """Write `batch`; the rows to try again (in order) and why, or ([], None)."""
        try:
            results = await self._insert_many(
                [p.exp for p in batch], [p.received_at for p in batch]
            )
        except Exception as exc:
            kind = self._classify(exc)
            if kind == "transient":
                return batch, exc
            if len(batch) == 1:
                return self._refused(batch[0], exc, kind)
            log.warning("archive batch of %d refused (%s); retrying row by row", len(batch), exc)
            for i, pending in enumerate(batch):
                held, error = await self._write([pending])
                if error is not None:  # the store itself failed: keep this row and the rest
                    return [*held, *batch[i + 1 :]], error
            return [], None
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
        return [], None

    def _refused(
        self, pending: _Pending, exc: Exception, kind: WriteFailure
    ) -> tuple[list[_Pending], BaseException | None]:
        pending.tries += 1
        if kind == "unknown" and pending.tries < UNKNOWN_TRIES:
            return [pending], exc
        exp = pending.exp
        self.drops.add(
            Drop(exp.scope, exp.fingerprint, pending.received_at, type(exc).__name__, str(exc))
        )
        _settle_error(pending, exc)
        return [], None

    async def _pause(self, error: BaseException) -> None:
        self.last_error = f"{type(error).__name__}: {error}"
        if self._held_since is None:
            self._held_since = self._clock()
            self._delay = self._retry_first_s
            self.outages += 1
            log.warning(
                "archive: the store refused a write (%s); %d messages wait in the queue "
                "and are retried until it takes them",
                self.last_error,
                len(self._queue),
            )
        else:
            held = self._held_log.allow("held")
            if held is not None:
                log.warning(
                    "archive: the store still refuses writes after %.0f s (%s); %d messages wait%s",
                    self.held_s or 0.0,
                    self.last_error,
                    len(self._queue),
                    repeats(held),
                )
        await asyncio.sleep(self._delay)
        self._delay = min(self._delay * 2, self._retry_max_s)

    def _healed(self) -> None:
        if self._held_since is None:
            return
        log.warning(
            "archive: the store takes writes again after %.1f s; %d messages still queued "
            "are being written",
            self.held_s or 0.0,
            len(self._queue),
        )
        self._held_since = None
        self.last_error = ""
        self._delay = self._retry_first_s


_REFUSED_LOG = LogThrottle(FULL_REPORT_S)


def _settle_error(pending: _Pending, exc: Exception) -> None:
    held = _REFUSED_LOG.allow(type(exc).__name__)
    if held is not None:
        log.error(
            "archive dropped %s/%s (the database refuses the row itself; counted in /status): %s%s",
            pending.exp.scope,
            pending.exp.fingerprint,
            exc,
            repeats(held),
        )
    if not pending.future.done():
        pending.future.set_exception(exc)
