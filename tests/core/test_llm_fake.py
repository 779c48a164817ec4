"""ScriptedLLM: the in-process fake replays its script and records requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_core import Settings, Yuji
from memory_core.errors import LLMTimeout, LLMUnavailable
from memory_core.llm import (
    ChatMessage,
    ChatResponse,
    LLMRequest,
    ScriptedLLM,
    text_response,
    tool_call,
    tool_calls_response,
)


async def test_replays_responses_exceptions_and_callables() -> None:
    async def echo(request: LLMRequest) -> ChatResponse:
        return text_response(f"echo:{request.messages[-1].content}")

    llm = ScriptedLLM(
        [
            tool_calls_response(tool_call("f", {"a": 1}, call_id="c1")),
            LLMTimeout("scripted"),
            echo,
            lambda request: text_response(str(len(request.tools))),
        ]
    )
    msgs = [ChatMessage(role="user", content="hi")]
    first = await llm.chat(msgs)
    assert first.message.tool_calls[0].id == "c1"
    assert json.loads(first.message.tool_calls[0].arguments) == {"a": 1}
    with pytest.raises(LLMTimeout):
        await llm.chat(msgs)
    assert (await llm.chat(msgs, timeout_s=3)).message.content == "echo:hi"
    assert (await llm.chat(msgs)).message.content == "0"
    assert len(llm.requests) == 4
    assert llm.requests[2].timeout_s == 3
    with pytest.raises(LLMUnavailable):
        await llm.chat(msgs)


async def test_default_answers_when_queue_is_empty() -> None:
    llm = ScriptedLLM(default=text_response("default"))
    llm.push(text_response("first"))
    assert llm.pending == 1
    assert (await llm.chat([])).message.content == "first"
    assert (await llm.chat([])).message.content == "default"


async def test_injected_llm_wins_over_settings(tmp_path: Path) -> None:
    llm = ScriptedLLM()
    core = await Yuji.open(Settings(data_dir=tmp_path), llm=llm)
    try:
        assert core.llm is llm
    finally:
        await core.close()
