"""One `llm_usage` row per provider call, from whichever thread made the call.

Embeddings are computed in worker threads (a question beside the event loop, recent
messages, `yuji embed`), so a call cannot await the repository itself: it hands its
row to `ThreadedUsage`, which writes it on the event loop the core was opened on. A
failing write is logged and never fails the call.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from memory_core.clock import Clock
from memory_core.llm.metered import outcome_of
from memory_core.storage import UsageRow

log = logging.getLogger("yuji.providers")

Record = Callable[["Call"], None]
"""Where a provider reports each call it made."""


class UsageSink(Protocol):
    async def record(self, row: UsageRow) -> None: ...


@dataclass(frozen=True, slots=True)
class Call:
    job: str
    """`embed` or `rerank`."""
    model: str
    tokens: int
    """Input tokens as the provider reported them (0 when it did not)."""
    latency_ms: int
    outcome: str
    scope: str | None = None


def timed(
    record: Record | None, job: str, model: str, scope: str | None = None
) -> Callable[[BaseException | None, int], None]:
    """Started now; call the result with (the exception or None, tokens) when done."""
    started = time.perf_counter()

    def done(exc: BaseException | None, tokens: int) -> None:
        if record is not None:
            ms = round((time.perf_counter() - started) * 1000)
            record(Call(job, model, tokens, ms, outcome_of(exc), scope))

    return done


class ThreadedUsage:
    """Rows from any thread, written on the loop that made this object."""

    def __init__(self, sink: UsageSink, clock: Clock) -> None:
        self._sink = sink
        self._clock = clock
        self._loop = asyncio.get_running_loop()
        self._tasks: set[asyncio.Task[None]] = set()

    def __call__(self, call: Call) -> None:
        row = UsageRow(
            at=self._clock.now(),
            job=call.job,
            model=call.model,
            scope=call.scope,
            prompt_tokens=call.tokens,
            completion_tokens=0,
            cached_tokens=0,
            latency_ms=call.latency_ms,
            outcome=call.outcome,
        )
        try:
            self._loop.call_soon_threadsafe(self._spawn, row)
        except RuntimeError:  # the loop is closed: the process is ending
            log.info("providers: usage of a %s call not recorded (loop closed)", call.job)

    def _spawn(self, row: UsageRow) -> None:
        task = self._loop.create_task(self._write(row))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _write(self, row: UsageRow) -> None:
        try:
            await self._sink.record(row)
        except Exception:
            log.exception("providers: recording usage of a %s call failed", row.job)

    async def drain(self) -> None:
        """Wait until every row handed over so far is written."""
        await asyncio.sleep(0)  # rows handed over from this thread are scheduled first
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await asyncio.sleep(0)
