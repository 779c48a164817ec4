"""One batch, one conversation: deliver, let the model call tools, demand the ack.

queued -> delivered (the prompt is about to be sent; `delivered` watermark moves)
       -> processing (the model answered) -> done (acknowledge tool) | failed.
A turn that ends without the acknowledge call fails the batch; so do model errors,
too many turns, and anything unexpected. Failing moves `delivered` back to `acked`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import tzinfo

from memory_core.clock import Clock
from memory_core.errors import BatchError, LLMError, LLMToolsUnsupported, YujiError
from memory_core.llm.base import ChatMessage, LLMClient
from memory_core.prompts.consolidation import (
    BatchPerson,
    Line,
    batch_prompt,
    system_prompt,
    tool_specs,
)
from memory_core.storage import Batch, ConsolidationRepo, Failed

from .tools import BatchTools

log = logging.getLogger("yuji.consolidation")

TEMPERATURE = 0.3
LACKS_TOOLS = "the model lacks tool calling"
"""Opens a batch's error when the provider refused `tools`: consolidation stops."""


@dataclass(frozen=True, slots=True)
class BatchReport:
    batch_id: int
    scope: str
    first_id: int
    last_id: int
    messages: int
    chars: int
    """Characters of message text delivered (the batch's latched size)."""
    attempts: int
    state: str
    """done | failed"""
    outcome: str | None
    error: str | None
    turns: int
    tool_calls: int
    refused: int
    written: tuple[int, ...]
    changed: tuple[int, ...]
    near_duplicates: int
    fragment_id: int | None
    prompt_chars: int
    """Characters of the whole first prompt (system + batch), formatting included."""
    model_s: float
    """Seconds spent waiting for the model."""
    consecutive_failures: int = 0
    tool_results: tuple[str, ...] = ()
    """What each tool call answered, in order (the model's view of refusals)."""

    @property
    def lacks_tools(self) -> bool:
        return lacks_tools(self.error)

    def describe(self) -> str:
        head = (
            f"batch {self.batch_id} {self.scope} #{self.first_id}..#{self.last_id} "
            f"({self.messages} messages, {self.chars} chars, attempt {self.attempts}): "
        )
        if self.state == "done":
            return head + (
                f"done, {self.outcome}; {len(self.written)} written, {len(self.changed)} changed, "
                f"{self.refused} of {self.tool_calls} tool calls refused, {self.turns} turns"
            )
        return head + f"FAILED: {self.error} ({self.consecutive_failures} in a row)"


class BatchRunner:
    def __init__(
        self,
        *,
        llm: LLMClient,
        repo: ConsolidationRepo,
        clock: Clock,
        zone: tzinfo,
        bot_name: str,
        max_turns: int,
        timeout_s: float,
    ) -> None:
        self.llm = llm
        self.repo = repo
        self.clock = clock
        self.zone = zone
        self.bot_name = bot_name
        self.max_turns = max(1, max_turns)
        self.timeout_s = timeout_s

    async def run(
        self,
        batch: Batch,
        lines: Sequence[Line],
        tools: BatchTools,
        people: Sequence[BatchPerson] = (),
    ) -> BatchReport:
        messages = [
            ChatMessage(role="system", content=system_prompt(self.bot_name)),
            ChatMessage(
                role="user",
                content=batch_prompt(
                    batch.scope,
                    batch.token,
                    lines,
                    self.zone,
                    first_id=batch.first_id,
                    last_id=batch.last_id,
                    people=people,
                ),
            ),
        ]
        prompt_chars = sum(len(m.content or "") for m in messages)
        turns = 0
        model_s = 0.0
        error: str | None = None
        specs = tool_specs()
        try:
            await self.repo.delivered(batch.id, self.clock.now())
            while error is None and tools.acknowledged is None:
                if turns >= self.max_turns:
                    error = f"no acknowledgement after {turns} turns"
                    break
                started = time.perf_counter()
                response = await self.llm.chat(
                    messages,
                    tools=specs,
                    temperature=TEMPERATURE,
                    timeout_s=self.timeout_s,
                    scope=batch.scope,
                )
                model_s += time.perf_counter() - started
                turns += 1
                if turns == 1:
                    await self.repo.processing(batch.id, self.clock.now())
                messages.append(response.message)
                if not response.message.tool_calls:
                    error = "the model ended its turn without acknowledging"
                    break
                for call in response.message.tool_calls:
                    result = await tools.handle(call)
                    messages.append(ChatMessage(role="tool", content=result, tool_call_id=call.id))
                if tools.acknowledged is None and tools.ended is not None:
                    error = f"batch ended without acknowledgement: {tools.ended}"
        except LLMToolsUnsupported as exc:
            error = f"{LACKS_TOOLS}: {exc}"
        except LLMError as exc:
            error = f"model error: {type(exc).__name__}: {exc}"
        except BatchError as exc:
            error = f"batch closed from outside: {exc}"
        except asyncio.CancelledError:
            await asyncio.shield(self._fail(batch, "cancelled (watchdog or shutdown)"))
            raise
        except Exception as exc:
            log.exception("batch %d crashed", batch.id)
            error = f"unexpected {type(exc).__name__}: {exc}"
        failed: Failed | None = None
        if tools.acknowledged is None:
            failed = await self._fail(batch, error or "no acknowledgement")
        await self._count_tools(batch, tools)
        return batch_report(
            batch,
            tools,
            error=error,
            turns=turns,
            prompt_chars=prompt_chars,
            model_s=model_s,
            consecutive_failures=failed.consecutive_failures if failed else 0,
            tool_results=tuple(m.content or "" for m in messages if m.role == "tool"),
        )

    async def _count_tools(self, batch: Batch, tools: BatchTools) -> None:
        """Keep the batch's tool calls and refusals for the console (informational:
        a write that fails is logged, the batch's outcome stands)."""
        try:
            await self.repo.count_tools(batch.id, tools.stats.calls, tools.stats.refused)
        except YujiError as exc:
            log.warning("batch %d: tool counts not recorded: %s", batch.id, exc)

    async def _fail(self, batch: Batch, error: str) -> Failed | None:
        failed = await self.repo.fail(batch.id, error, self.clock.now())
        log.warning("batch %d (%s) failed: %s", batch.id, batch.scope, error)
        return failed


def lacks_tools(error: str | None) -> bool:
    """Whether a batch failed because the provider refused tool calling."""
    return bool(error and error.startswith(LACKS_TOOLS))


def batch_report(
    batch: Batch,
    tools: BatchTools,
    *,
    error: str | None,
    turns: int = 0,
    prompt_chars: int = 0,
    model_s: float = 0.0,
    consecutive_failures: int = 0,
    tool_results: tuple[str, ...] = (),
) -> BatchReport:
    """The report of `batch` as its tools left it: done when acknowledged, else failed."""
    return BatchReport(
        batch_id=batch.id,
        scope=batch.scope,
        first_id=batch.first_id,
        last_id=batch.last_id,
        messages=batch.message_count,
        chars=batch.chars,
        attempts=batch.attempts,
        state="done" if tools.acknowledged else "failed",
        outcome=tools.acknowledged,
        error=None if tools.acknowledged else (error or "no acknowledgement"),
        turns=turns,
        tool_calls=tools.stats.calls,
        refused=tools.stats.refused,
        written=tuple(tools.stats.written),
        changed=tuple(tools.stats.changed),
        near_duplicates=tools.stats.near_duplicates,
        fragment_id=tools.fragment_id,
        prompt_chars=prompt_chars,
        model_s=model_s,
        consecutive_failures=consecutive_failures,
        tool_results=tool_results,
    )
