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


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict[str, Any])
    """JSON Schema of the arguments object."""


@dataclass(frozen=True, slots=True)
class ChatResponse:
    message: ChatMessage
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict[str, int])


class LLMClient(Protocol):
    async def chat(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        temperature: float | None = None,
        timeout_s: float | None = None,
    ) -> ChatResponse:
        """One completion. Raises only subclasses of `memory_core.errors.LLMError`."""
        ...
