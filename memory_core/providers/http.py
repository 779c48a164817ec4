"""JSON over HTTP to a provider's model API, with the failure policy of docs/providers.md.

`post_json` (blocking, for embeddings computed in a worker thread or the embed process)
retries 429, 5xx and transport errors with exponential backoff, honouring the
server's `Retry-After` (seconds), at most `retries` times, all inside one deadline.
`apost_json` (the event loop, for the reranker on a wake) makes one attempt: a wake
waits for no backoff. Both raise only `memory_core.errors.LLMError` subclasses; the key
goes in a header and never into a message.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import httpx

from memory_core.errors import LLMBadResponse, LLMRateLimited, LLMTimeout, LLMUnavailable
from memory_core.llm.retrying import Retryable, retry_after, snippet

RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
MAX_RETRY_AFTER_S = 30.0


def headers(api_key: str) -> dict[str, str]:
    out = {"content-type": "application/json"}
    if api_key:
        out["authorization"] = f"Bearer {api_key}"
    return out


def post_json(
    client: httpx.Client,
    url: str,
    body: dict[str, Any],
    *,
    api_key: str,
    timeout_s: float,
    retries: int,
    backoff_s: float = 0.5,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """The parsed JSON answer to `body` at `url`, retried as the module says."""
    deadline = time.monotonic() + timeout_s
    attempt = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise LLMTimeout(f"{url} gave no answer within {timeout_s:g}s")
        try:
            resp = client.post(
                url, json=body, headers=headers(api_key), timeout=httpx.Timeout(remaining)
            )
            return answer(resp)
        except Retryable as exc:
            if attempt >= retries:
                raise exc.final() from None
            delay = exc.retry_after_s
            if delay is None:
                delay = backoff_s * (2**attempt) * (0.5 + random.random() / 2)
            delay = min(delay, MAX_RETRY_AFTER_S)
            if time.monotonic() + delay >= deadline:
                raise exc.final() from None
            attempt += 1
            sleep(delay)
        except httpx.TimeoutException:
            raise LLMTimeout(f"{url} gave no answer within {timeout_s:g}s") from None
        except httpx.HTTPError as exc:
            if attempt >= retries:
                raise LLMUnavailable(f"{url}: {type(exc).__name__}") from None
            attempt += 1
            sleep(min(backoff_s * (2**attempt), max(0.0, deadline - time.monotonic())))


async def apost_json(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], *, api_key: str, timeout_s: float
) -> Any:
    """One attempt within `timeout_s`; the parsed JSON answer."""
    try:
        resp = await client.post(
            url, json=body, headers=headers(api_key), timeout=httpx.Timeout(timeout_s)
        )
    except httpx.TimeoutException:
        raise LLMTimeout(f"{url} gave no answer within {timeout_s:g}s") from None
    except httpx.HTTPError as exc:
        raise LLMUnavailable(f"{url}: {type(exc).__name__}") from None
    try:
        return answer(resp)
    except Retryable as exc:
        raise exc.final() from None


def answer(resp: httpx.Response) -> Any:
    """The JSON of a successful response; a status worth retrying is `Retryable`."""
    if resp.status_code in RETRY_STATUSES:
        kind = LLMRateLimited if resp.status_code == 429 else LLMUnavailable
        raise Retryable(
            f"HTTP {resp.status_code} {snippet(resp.text)}",
            kind,
            retry_after_s=retry_after(resp.headers.get("retry-after")),
        )
    if resp.status_code >= 400:
        raise Refused(resp.status_code, f"HTTP {resp.status_code} {snippet(resp.text)}")
    try:
        return resp.json()
    except ValueError:
        raise LLMBadResponse(f"answer is not JSON: {snippet(resp.text)}") from None


class Refused(LLMUnavailable):
    """A 4xx the provider will answer the same way again (a wrong model, key or shape)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
