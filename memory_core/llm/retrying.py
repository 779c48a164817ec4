"""What a model API's failed answer means for the next attempt, shared by the chat
client (openai_client.py) and the providers' embeddings and rerank clients."""

from __future__ import annotations

from memory_core.errors import LLMError


class Retryable(Exception):
    """An attempt that may succeed if tried again (429, 5xx, transport), with the wait
    the server asked for; `final` is the error once the retries are spent."""

    def __init__(
        self, detail: str, kind: type[LLMError], *, retry_after_s: float | None = None
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.kind = kind
        self.retry_after_s = retry_after_s

    def final(self) -> LLMError:
        return self.kind(f"{self.detail} (retries exhausted)")


def snippet(text: str, limit: int = 200) -> str:
    """A server's answer shortened to one line for an error message."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def retry_after(value: str | None) -> float | None:
    """`Retry-After` in seconds (the HTTP-date form is not used by these APIs)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
