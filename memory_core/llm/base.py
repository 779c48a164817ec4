"""The LLM seam: what every caller (chat, consolidation, nightly) talks to.

Shaped like OpenAI chat completions with tool calling, since every provider yuji
targets (DeepSeek, Qwen, SiliconFlow, Ollama, ...) speaks that dialect.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str
    """Raw JSON text as the model produced it: parsing (and refusing) is the caller's job."""


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    images: tuple[str, ...] = ()
    """Image URLs (usually `data:` URLs) sent beside `content` to a vision model."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict[str, Any])
    """JSON Schema of the arguments object."""


@dataclass(frozen=True, slots=True)
class ResponseSchema:
    """The JSON Schema a reply must fit, sent as a structured-output request.

    `memory_core.prompts.structured.response_schema` builds one from a prompt's
    pydantic response model. The caller still validates the reply itself: a provider
    may only support a weaker mode (see `memory_core.llm.modes`).
    """

    name: str
    schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ChatResponse:
    message: ChatMessage
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict[str, int])
    """Integer `usage` fields; `cached_tokens` is lifted from `prompt_tokens_details`."""


class LLMClient(Protocol):
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
        """One completion. Raises only subclasses of `memory_core.errors.LLMError`.

        `schema` asks for a JSON reply of that shape; `scope` names the chat the call
        is for (token accounting), None for work spanning chats.
        """
        ...
