"""`OpenAICompatibleClient`: chat completions with tool calling over httpx.

Speaks the dialect every provider yuji targets shares (DeepSeek, Qwen, SiliconFlow,
Ollama's `/v1`, ...): `POST {base_url}/chat/completions` with a bearer key.

Failure policy (SPEC §9, principle 9):
- 429, 5xx and transport errors are retried with exponential backoff (with jitter,
  honouring `Retry-After`), at most `llm_max_retries` times;
- one hard deadline bounds the whole call, retries and backoff included, so a caller
  never waits longer than `timeout_s`;
- everything that goes wrong leaves as a `memory_core.errors.LLMError` subclass;
- the key is sent in a header and never logged or put into an error message.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from memory_core.errors import LLMBadResponse, LLMError, LLMRateLimited, LLMTimeout, LLMUnavailable
from memory_core.settings import Settings

from .base import ChatMessage, ChatResponse, ToolCall, ToolSpec

log = logging.getLogger("yuji.llm")

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
MAX_RETRY_AFTER_S = 30.0


class OpenAICompatibleClient:
    """One configured model. Create once, `aclose()` at shutdown."""

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        backoff_base_s: float = 0.5,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if not settings.llm_base_url or not settings.llm_model:
            raise LLMUnavailable("no model configured (YUJI_LLM_BASE_URL / YUJI_LLM_MODEL)")
        self.base_url = settings.llm_base_url.rstrip("/")
        self.model = settings.llm_model
        self.default_timeout_s = settings.llm_timeout_s
        self.default_temperature = settings.llm_temperature
        self.max_retries = max(0, settings.llm_max_retries)
        self._api_key = settings.llm_api_key
        self._transport = transport
        self._backoff_base_s = backoff_base_s
        self._sleep = sleep
        self._http: httpx.AsyncClient | None = None

    def __repr__(self) -> str:
        return f"OpenAICompatibleClient(base_url={self.base_url!r}, model={self.model!r})"

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            headers = {"Content-Type": "application/json"}
            if self._api_key:
                headers["Authorization"] = f"Bearer {self._api_key}"
            self._http = httpx.AsyncClient(
                headers=headers, transport=self._transport, follow_redirects=False
            )
        return self._http

    def _mask(self, text: str) -> str:
        """A server may echo the key back in an error body: it never leaves masked."""
        return text.replace(self._api_key, "***") if self._api_key else text

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def chat(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        temperature: float | None = None,
        timeout_s: float | None = None,
    ) -> ChatResponse:
        body = request_body(
            self.model,
            messages,
            tools=tools,
            temperature=self.default_temperature if temperature is None else temperature,
        )
        budget = self.default_timeout_s if timeout_s is None else timeout_s
        try:
            async with asyncio.timeout(budget):
                return await self._with_retries(body, time.monotonic() + budget)
        except TimeoutError as exc:
            raise LLMTimeout(f"model call exceeded {budget:g}s") from exc

    async def _with_retries(self, body: dict[str, Any], deadline: float) -> ChatResponse:
        attempt = 0
        while True:
            try:
                return await self._attempt(body, deadline)
            except _Retryable as exc:
                if attempt >= self.max_retries:
                    raise exc.final() from None
                delay = exc.retry_after_s
                if delay is None:
                    delay = self._backoff_base_s * (2**attempt) * (0.5 + random.random() / 2)
                delay = min(delay, MAX_RETRY_AFTER_S, max(0.0, deadline - time.monotonic()))
                attempt += 1
                log.warning(
                    "llm: %s; retry %d/%d in %.2fs", exc.detail, attempt, self.max_retries, delay
                )
                await self._sleep(delay)

    async def _attempt(self, body: dict[str, Any], deadline: float) -> ChatResponse:
        remaining = max(0.001, deadline - time.monotonic())
        try:
            resp = await self._client().post(self.url, json=body, timeout=httpx.Timeout(remaining))
        except httpx.TimeoutException as exc:
            raise LLMTimeout(f"model call timed out ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            raise _Retryable(f"transport error {type(exc).__name__}", LLMUnavailable) from None
        if resp.status_code in RETRY_STATUSES:
            kind = LLMRateLimited if resp.status_code == 429 else LLMUnavailable
            raise _Retryable(
                f"HTTP {resp.status_code} {_snippet(self._mask(resp.text))}",
                kind,
                retry_after_s=_retry_after(resp.headers.get("retry-after")),
            )
        if resp.status_code >= 400:
            raise LLMUnavailable(
                f"HTTP {resp.status_code} from model: {_snippet(self._mask(resp.text))}"
            )
        try:
            payload = resp.json()
        except ValueError:
            raise LLMBadResponse(
                f"response is not JSON: {_snippet(self._mask(resp.text))}"
            ) from None
        return parse_response(payload)


class _Retryable(Exception):
    def __init__(
        self, detail: str, kind: type[LLMError], *, retry_after_s: float | None = None
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.kind = kind
        self.retry_after_s = retry_after_s

    def final(self) -> LLMError:
        return self.kind(f"{self.detail} (retries exhausted)")


def _snippet(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


# --- wire format (pure) -------------------------------------------------------------


def request_body(
    model: str,
    messages: list[ChatMessage],
    *,
    tools: list[ToolSpec] | None,
    temperature: float | None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": [_message(m) for m in messages]}
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters or {"type": "object", "properties": {}},
                },
            }
            for t in tools
        ]
        body["tool_choice"] = "auto"
    if temperature is not None:
        body["temperature"] = temperature
    return body


def _message(m: ChatMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in m.tool_calls
        ]
    if m.tool_call_id is not None:
        out["tool_call_id"] = m.tool_call_id
    if m.name is not None:
        out["name"] = m.name
    return out


def parse_response(payload: Any) -> ChatResponse:
    """An OpenAI-shaped completion -> ChatResponse, or LLMBadResponse."""
    if not isinstance(payload, dict):
        raise LLMBadResponse("response is not a JSON object")
    data: dict[str, Any] = payload  # pyright: ignore[reportUnknownVariableType]
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        error = data.get("error")
        raise LLMBadResponse(f"response has no choices{f': {error!r}' if error else ''}")
    choice: dict[str, Any] = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise LLMBadResponse("choice has no message")
    msg: dict[str, Any] = message
    content = msg.get("content")
    if content is not None and not isinstance(content, str):
        raise LLMBadResponse("message content is not text")
    calls: list[ToolCall] = []
    raw_calls = msg.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise LLMBadResponse("tool_calls is not a list")
    for index, raw in enumerate(raw_calls):
        calls.append(_tool_call(raw, index))
    usage_raw = data.get("usage")
    usage: dict[str, int] = {}
    if isinstance(usage_raw, dict):
        usage = {str(k): v for k, v in usage_raw.items() if isinstance(v, int)}
    finish = choice.get("finish_reason")
    return ChatResponse(
        message=ChatMessage(role="assistant", content=content, tool_calls=tuple(calls)),
        finish_reason=finish if isinstance(finish, str) else None,
        usage=usage,
    )


def _tool_call(raw: Any, index: int) -> ToolCall:
    if not isinstance(raw, dict):
        raise LLMBadResponse("a tool call is not an object")
    call: dict[str, Any] = raw
    function = call.get("function")
    if not isinstance(function, dict):
        raise LLMBadResponse("a tool call has no function")
    fn: dict[str, Any] = function
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise LLMBadResponse("a tool call has no name")
    arguments = fn.get("arguments", "")
    if not isinstance(arguments, str):
        # Some servers (Ollama) send the arguments object itself.
        arguments = json.dumps(arguments, ensure_ascii=False)
    call_id = call.get("id")
    return ToolCall(
        id=call_id if isinstance(call_id, str) and call_id else f"call_{index}",
        name=name,
        arguments=arguments,
    )
