"""`MeteredLLM`: any LLM client, with one usage row written per call.

It wraps the client one job uses (chat, consolidation, nightly, vision) and records
job, model, chat, prompt / completion / cached prompt tokens (from `usage`), latency
and outcome for every call: failed and cancelled ones too, with zero tokens. A
failing write is logged and never fails the call; a cancelled call's row is written
in the background, since the caller is already gone.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

from memory_core.clock import Clock
from memory_core.errors import (
    LLMBadResponse,
    LLMRateLimited,
    LLMTimeout,
    LLMToolsUnsupported,
    LLMUnavailable,
)
from memory_core.storage import UsageRow

from .base import ChatMessage, ChatResponse, LLMClient, ResponseSchema, ToolSpec

log = logging.getLogger("yuji.llm")


class UsageSink(Protocol):
    async def record(self, row: UsageRow) -> None: ...


def outcome_of(exc: BaseException | None) -> str:
    """The `llm_usage.outcome` of a call that raised `exc` (None: it answered)."""
    if exc is None:
        return "ok"
    if isinstance(exc, asyncio.CancelledError):
        return "cancelled"
    for kind, name in (
        (LLMToolsUnsupported, "no_tools"),
        (LLMTimeout, "timeout"),
        (LLMRateLimited, "rate_limited"),
        (LLMBadResponse, "bad_response"),
        (LLMUnavailable, "unavailable"),
    ):
        if isinstance(exc, kind):
            return name
    return "error"


class MeteredLLM:
    def __init__(
        self, inner: LLMClient, *, job: str, model: str, sink: UsageSink, clock: Clock
    ) -> None:
        self.inner = inner
        self.job = job
        self.model = model
        self._sink = sink
        self._clock = clock
        self._background: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:
        return f"MeteredLLM({self.job}, {self.inner!r})"

    async def chat(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        temperature: float | None = None,
        timeout_s: float | None = None,
        schema: ResponseSchema | None = None,
        scope: str | None = None,
    ) -> ChatResponse:
        started = time.perf_counter()
        try:
            response = await self.inner.chat(
                messages,
                tools=tools,
                temperature=temperature,
                timeout_s=timeout_s,
                schema=schema,
                scope=scope,
            )
        except asyncio.CancelledError as exc:
            task = asyncio.get_running_loop().create_task(
                self._record(self._row(scope, started, exc, {}))
            )
            self._background.add(task)
            task.add_done_callback(self._background.discard)
            raise
        except Exception as exc:
            await self._record(self._row(scope, started, exc, {}))
            raise
        await self._record(self._row(scope, started, None, response.usage))
        return response

    def _row(
        self, scope: str | None, started: float, exc: BaseException | None, usage: dict[str, int]
    ) -> UsageRow:
        return UsageRow(
            at=self._clock.now(),
            job=self.job,
            model=self.model,
            scope=scope,
            prompt_tokens=usage.get("prompt_tokens", 0),
            completion_tokens=usage.get("completion_tokens", 0),
            cached_tokens=usage.get("cached_tokens", 0),
            latency_ms=round((time.perf_counter() - started) * 1000),
            outcome=outcome_of(exc),
        )

    async def _record(self, row: UsageRow) -> None:
        try:
            await self._sink.record(row)
        except Exception:
            log.exception("llm: recording usage of a %s call failed", row.job)

    async def drain(self) -> None:
        """Wait for rows of cancelled calls still being written (at shutdown, in tests)."""
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
