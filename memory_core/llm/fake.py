"""`ScriptedLLM`: the LLM client fake for unit tests.

It answers from a queue. Each item is a `ChatResponse`, an exception instance
(raised as is, e.g. `LLMTimeout(...)`), or a callable taking the `LLMRequest` and
returning a `ChatResponse` (sync or async). Every request is recorded in `requests`.
An empty queue answers with `default` when given, else raises `LLMUnavailable`.
"""

from __future__ import annotations

import inspect
import itertools
import json
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from memory_core.errors import LLMUnavailable

from .base import ChatMessage, ChatResponse, ResponseSchema, ToolCall, ToolSpec


@dataclass(frozen=True, slots=True)
class LLMRequest:
    messages: tuple[ChatMessage, ...]
    tools: tuple[ToolSpec, ...]
    temperature: float | None
    timeout_s: float | None
    schema: ResponseSchema | None = None
    scope: str | None = None


Responder = Callable[[LLMRequest], ChatResponse | Awaitable[ChatResponse]]
ScriptItem = ChatResponse | BaseException | Responder

_ids = itertools.count(1)


def text_response(text: str, *, finish_reason: str = "stop") -> ChatResponse:
    return ChatResponse(ChatMessage(role="assistant", content=text), finish_reason=finish_reason)


def tool_call(
    name: str, arguments: dict[str, Any] | str, *, call_id: str | None = None
) -> ToolCall:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=call_id or f"call_{next(_ids)}", name=name, arguments=raw)


def tool_calls_response(*calls: ToolCall, content: str | None = None) -> ChatResponse:
    return ChatResponse(
        ChatMessage(role="assistant", content=content, tool_calls=tuple(calls)),
        finish_reason="tool_calls",
    )


class ScriptedLLM:
    def __init__(
        self, script: Iterable[ScriptItem] = (), *, default: ScriptItem | None = None
    ) -> None:
        self._queue: deque[ScriptItem] = deque(script)
        self.default = default
        self.requests: list[LLMRequest] = []

    def push(self, *items: ScriptItem) -> None:
        self._queue.extend(items)

    @property
    def pending(self) -> int:
        return len(self._queue)

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
        request = LLMRequest(
            tuple(messages), tuple(tools or ()), temperature, timeout_s, schema, scope
        )
        self.requests.append(request)
        if self._queue:
            item = self._queue.popleft()
        elif self.default is not None:
            item = self.default
        else:
            raise LLMUnavailable("ScriptedLLM: script exhausted")
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, ChatResponse):
            return item
        result = item(request)
        if inspect.isawaitable(result):
            result = await result
        return result
