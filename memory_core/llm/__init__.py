"""The LLM seam: protocol, the OpenAI-compatible client, and the scripted fake."""

from .base import ChatMessage as ChatMessage
from .base import ChatResponse as ChatResponse
from .base import LLMClient as LLMClient
from .base import ToolCall as ToolCall
from .base import ToolSpec as ToolSpec
from .fake import LLMRequest as LLMRequest
from .fake import ScriptedLLM as ScriptedLLM
from .fake import text_response as text_response
from .fake import tool_call as tool_call
from .fake import tool_calls_response as tool_calls_response
from .openai_client import OpenAICompatibleClient as OpenAICompatibleClient

__all__ = [
    "ChatMessage",
    "ChatResponse",
    "LLMClient",
    "LLMRequest",
    "OpenAICompatibleClient",
    "ScriptedLLM",
    "ToolCall",
    "ToolSpec",
    "text_response",
    "tool_call",
    "tool_calls_response",
]
