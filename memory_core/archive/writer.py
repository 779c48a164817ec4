"""The group-commit writer: many concurrent `append`s, one transaction per burst.

Callers enqueue and await their own future; one writer task drains the queue, up to
`max_batch` rows per transaction. While a transaction is open the next burst gathers,
so the commit rate adapts to the load instead of paying one fsync per message. A
batch the database refuses is retried row by row, so one bad row fails alone and
never loses the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from memory_core.storage.archive_repo import Appended
from memory_core.types import NewExperience

log = logging.getLogger("yuji.archive")

InsertMany = Callable[[Sequence[NewExperience], Sequence[datetime]], Awaitable[list[Appended]]]


@dataclass(slots=True)
class _Pending:
    exp: NewExperience
    received_at: datetime
    future: asyncio.Future[Appended]


class GroupCommitWriter:
    def __init__(self, insert_many: InsertMany, *, max_batch: int = 500) -> None:
        self._insert_many = insert_many
        self._max_batch = max(1, max_batch)
        self._queue: deque[_Pending] = deque()
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.batches = 0
        """Transactions committed so far (for tests and the benchmark)."""

    async def submit(self, exp: NewExperience, received_at: datetime) -> Appended:
        if self._closed:
            raise RuntimeError("the archive writer is closed")
        future: asyncio.Future[Appended] = asyncio.get_running_loop().create_future()
        self._queue.append(_Pending(exp, received_at, future))
        self._idle.clear()
        self._wakeup.set()
        self._ensure_task()
        # A cancelled caller must not cancel the write: the message is still archived.
        return await asyncio.shield(future)

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
        for pending, result in zip(batch, results, strict=True):
            if not pending.future.done():
                pending.future.set_result(result)


def _settle_error(pending: _Pending, exc: Exception) -> None:
    log.error("archive refused %s/%s: %s", pending.exp.scope, pending.exp.fingerprint, exc)
    if not pending.future.done():
        pending.future.set_exception(exc)
