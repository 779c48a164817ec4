"""`OpenAICompatibleClient`: chat completions with tool calling over httpx.

Speaks the dialect every provider yuji targets shares (DeepSeek, Qwen, SiliconFlow,
Ollama's `/v1`, ...): `POST {base_url}/chat/completions` with a bearer key. The wire
format is `wire.py`; this module is transport and failure policy.

Provider differences handled here:
- a call with a `schema` is sent in the structured-output mode `modes.JsonModes`
  holds for this base URL and model; a 400 naming the response format moves it one
  mode weaker and the same call is sent again at once (no retry spent);
- a 400 naming tools on a request with tools is `LLMToolsUnsupported`;
- a server that streams server-sent events anyway is read as a stream;
- thinking (`reasoning_content`, `<think>…</think>`) never leaves `wire.py`.

Failure policy (docs/design.md#replies):
- 429, 5xx and transport errors are retried with exponential backoff (with jitter,
  honouring `Retry-After`), at most `llm_max_retries` times;
- one hard deadline bounds the whole call, retries and backoff included, so a caller
  never waits longer than `timeout_s`;
- everything that goes wrong leaves as a `memory_core.errors.LLMError` subclass;
- the key is sent in a header and never logged or put into an error message.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from memory_core.errors import (
    LLMBadResponse,
    LLMRateLimited,
    LLMTimeout,
    LLMToolsUnsupported,
    LLMUnavailable,
)
from memory_core.settings import LLMJob, Settings

from .base import ChatMessage, ChatResponse, ResponseSchema, ToolSpec
from .modes import JsonModes
from .retrying import Retryable as _Retryable
from .retrying import retry_after as _retry_after
from .retrying import snippet as _snippet
from .wire import JsonMode, is_event_stream, parse_response, parse_stream, request_body

log = logging.getLogger("yuji.llm")

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
MAX_RETRY_AFTER_S = 30.0
REFUSAL_STATUSES = frozenset({400, 422})
"""What a provider answers a request it does not support (a mode, tools)."""
_NAMES_FORMAT = re.compile(r"response_format|json|schema", re.I)
_NAMES_TOOLS = re.compile(r"tool|function", re.I)


class OpenAICompatibleClient:
    """One configured model. Create once, `aclose()` at shutdown."""

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        backoff_base_s: float = 0.5,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        modes: JsonModes | None = None,
        job: LLMJob = "chat",
    ) -> None:
        endpoint = settings.model_for(job)
        if endpoint is None:
            raise LLMUnavailable(
                f"no model configured for {job} (YUJI_LLM_BASE_URL / YUJI_LLM_MODEL, "
                f"or YUJI_{job.upper()}_LLM_*)"
            )
        self.base_url = endpoint.base_url.rstrip("/")
        self.model = endpoint.model
        self.default_timeout_s = settings.llm_timeout_s
        self.default_temperature = settings.llm_temperature
        self.max_retries = max(0, settings.llm_max_retries)
        self._api_key = endpoint.api_key
        self._transport = transport
        self._backoff_base_s = backoff_base_s
        self._sleep = sleep
        self._http: httpx.AsyncClient | None = None
        self.modes = modes or JsonModes(forced_mode(settings.llm_json_mode))

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
        schema: ResponseSchema | None = None,
        scope: str | None = None,
    ) -> ChatResponse:
        temperature = self.default_temperature if temperature is None else temperature
        budget = self.default_timeout_s if timeout_s is None else timeout_s
        try:
            async with asyncio.timeout(budget):
                deadline = time.monotonic() + budget
                mode = self.modes.current(self.base_url, self.model)
                while True:
                    body = request_body(
                        self.model,
                        messages,
                        tools=tools,
                        temperature=temperature,
                        schema=schema,
                        mode=mode,
                    )
                    try:
                        return await self._with_retries(body, deadline)
                    except _FormatRefused as exc:
                        weaker = self.modes.refused(self.base_url, self.model, mode)
                        if weaker is None:
                            raise LLMUnavailable(exc.detail) from None
                        mode = weaker
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
            detail = f"HTTP {resp.status_code} from model: {_snippet(self._mask(resp.text))}"
            refusal = resp.status_code in REFUSAL_STATUSES
            if refusal and "response_format" in body and _NAMES_FORMAT.search(resp.text):
                raise _FormatRefused(detail)
            if refusal and "tools" in body and _NAMES_TOOLS.search(resp.text):
                raise LLMToolsUnsupported(f"{self.model} lacks tool calling: {detail}")
            raise LLMUnavailable(detail)
        if is_event_stream(resp.headers.get("content-type", ""), resp.text):
            return parse_stream(resp.text)
        try:
            payload = resp.json()
        except ValueError:
            raise LLMBadResponse(
                f"response is not JSON: {_snippet(self._mask(resp.text))}"
            ) from None
        return parse_response(payload)


def forced_mode(setting: str) -> JsonMode | None:
    """`YUJI_LLM_JSON_MODE`: `auto` learns; any other value is used as is."""
    if setting == "json_schema" or setting == "json_object" or setting == "prompt":
        return setting
    return None


class _FormatRefused(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail
