"""The OpenAI chat-completions wire format, both ways (pure functions).

Out: `request_body` (tools, a structured-output `response_format` in the mode the
provider accepts, image parts for a vision model). In: `parse_response` for a JSON
completion and `parse_stream` for a server that streams server-sent events even
when asked not to. Either way a reasoning model's thinking never comes back:
`reasoning_content` is not read and `<think>…</think>` is cut out of the content.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from memory_core.errors import LLMBadResponse

from .base import ChatMessage, ChatResponse, ResponseSchema, ToolCall, ToolSpec

JsonMode = Literal["json_schema", "json_object", "prompt"]
JSON_MODES: tuple[JsonMode, ...] = ("json_schema", "json_object", "prompt")
"""Strongest first: a provider that refuses one is asked in the next."""

_THINK_BLOCK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.S | re.I)
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.I)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.I)


def strip_think(text: str) -> str:
    """`text` without a reasoning model's thinking.

    Closed `<think>…</think>` blocks go; an unclosed `<think>` (the answer was cut
    off mid-thought) takes the rest with it; a lone `</think>` (some servers drop
    the opening tag) takes everything before it.
    """
    text = _THINK_BLOCK.sub("", text)
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    return text.strip()


def request_body(
    model: str,
    messages: list[ChatMessage],
    *,
    tools: list[ToolSpec] | None,
    temperature: float | None,
    schema: ResponseSchema | None = None,
    mode: JsonMode = "prompt",
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
    if schema is not None and mode == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": schema.name, "schema": schema.schema, "strict": True},
        }
    elif schema is not None and mode == "json_object":
        body["response_format"] = {"type": "json_object"}
    return body


def _message(m: ChatMessage) -> dict[str, Any]:
    content: Any = m.content
    if m.images:
        parts: list[dict[str, Any]] = [{"type": "text", "text": m.content or ""}]
        parts += [{"type": "image_url", "image_url": {"url": url}} for url in m.images]
        content = parts
    out: dict[str, Any] = {"role": m.role, "content": content}
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
    # `reasoning_content` (DeepSeek-R1, Qwen3, ...) is never read: thinking stays out.
    if content is not None:
        content = strip_think(content)
    raw_calls = msg.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise LLMBadResponse("tool_calls is not a list")
    calls = [_tool_call(raw, index) for index, raw in enumerate(raw_calls)]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    finish = choice.get("finish_reason")
    return ChatResponse(
        message=ChatMessage(role="assistant", content=content, tool_calls=tuple(calls)),
        finish_reason=finish if isinstance(finish, str) else None,
        usage=parse_usage(data.get("usage")),
    )


def parse_usage(raw: Any) -> dict[str, int]:
    """`usage`'s integer fields, plus `cached_tokens` from where providers report it:
    `prompt_tokens_details.cached_tokens` (OpenAI, Qwen) or `prompt_cache_hit_tokens`
    (DeepSeek)."""
    if not isinstance(raw, dict):
        return {}
    data: dict[str, Any] = raw  # pyright: ignore[reportUnknownVariableType]
    usage = {str(k): v for k, v in data.items() if isinstance(v, int) and not isinstance(v, bool)}
    details = data.get("prompt_tokens_details")
    cached: Any = details.get("cached_tokens") if isinstance(details, dict) else None  # pyright: ignore[reportUnknownMemberType]
    if not isinstance(cached, int):
        cached = usage.get("prompt_cache_hit_tokens")
    if isinstance(cached, int):
        usage["cached_tokens"] = cached
    return usage


def _tool_call(raw: Any, index: int) -> ToolCall:
    if not isinstance(raw, dict):
        raise LLMBadResponse("a tool call is not an object")
    call: dict[str, Any] = raw  # pyright: ignore[reportUnknownVariableType]
    function = call.get("function")
    if not isinstance(function, dict):
        raise LLMBadResponse("a tool call has no function")
    fn: dict[str, Any] = function  # pyright: ignore[reportUnknownVariableType]
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


def is_event_stream(content_type: str, body: str) -> bool:
    return "text/event-stream" in content_type.lower() or body.lstrip().startswith("data:")


def parse_stream(text: str) -> ChatResponse:
    """Server-sent `chat.completion.chunk` events -> one ChatResponse (via the same
    `parse_response`, so thinking is cut the same way)."""
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    usage: Any = None
    for line in text.splitlines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            chunk = json.loads(data)
        except json.JSONDecodeError:
            raise LLMBadResponse(f"stream event is not JSON: {data[:80]!r}") from None
        if not isinstance(chunk, dict):
            raise LLMBadResponse("stream event is not an object")
        event: dict[str, Any] = chunk  # pyright: ignore[reportUnknownVariableType]
        if event.get("error"):
            raise LLMBadResponse(f"stream error: {event['error']!r}")
        usage = event.get("usage") or usage
        for choice in event.get("choices") or []:
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                content.append(delta["content"])
            for part in delta.get("tool_calls") or []:
                _merge_call(calls, part)
            finish = choice.get("finish_reason") or finish
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(content) if content or not calls else None,
    }
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return parse_response(
        {"choices": [{"message": message, "finish_reason": finish}], "usage": usage}
    )


def _merge_call(calls: dict[int, dict[str, Any]], part: Any) -> None:
    if not isinstance(part, dict):
        raise LLMBadResponse("a streamed tool call is not an object")
    delta: dict[str, Any] = part  # pyright: ignore[reportUnknownVariableType]
    index = delta.get("index", len(calls))
    call = calls.setdefault(index, {"function": {"name": "", "arguments": ""}})
    if delta.get("id"):
        call["id"] = delta["id"]
    function = delta.get("function") or {}
    if function.get("name"):
        call["function"]["name"] += function["name"]
    if isinstance(function.get("arguments"), str):
        call["function"]["arguments"] += function["arguments"]
