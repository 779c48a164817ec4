"""Provider behaviours, each against the real fake OpenAI server on loopback: the
structured-output fallback chain and its memory, models without tool calling,
reasoning models, forced streaming, and 429 with Retry-After."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import BaseModel

from memory_core import FakeClock, Settings, Yuji
from memory_core.cli import status as status_cli
from memory_core.errors import ConfigError, LLMToolsUnsupported, LLMUnavailable
from memory_core.llm import ChatMessage, OpenAICompatibleClient, ToolSpec
from memory_core.llm.modes import JsonModes
from memory_core.nightly.asking import ask
from memory_core.ops.alerts import RecordingAlertSink
from memory_core.prompts.nightly import DiaryReply, Prompt
from memory_core.prompts.structured import response_schema
from memory_core.types import NewExperience
from tests.core.chat.test_service import incoming
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

__all__ = ["openai_server"]

HI = [ChatMessage(role="user", content="只输出 JSON")]


class Answer(BaseModel):
    word: str
    count: int = 0


SCHEMA = response_schema(Answer)


def client(server: FakeOpenAIServer, **settings: object) -> OpenAICompatibleClient:
    base = Settings(llm_base_url=server.base_url, llm_model=server.model, llm_max_retries=2)
    return OpenAICompatibleClient(base.with_changes(**settings), backoff_base_s=0.001)


def formats(server: FakeOpenAIServer) -> list[str | None]:
    return [(r.body.get("response_format") or {}).get("type") for r in server.requests]


async def test_json_schema_is_sent_strict_when_the_provider_accepts_it(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.push('{"word": "鱼", "count": 2}')
    llm = client(openai_server)
    try:
        reply = await llm.chat(HI, schema=SCHEMA)
    finally:
        await llm.aclose()
    assert json.loads(reply.message.content or "") == {"word": "鱼", "count": 2}
    sent = openai_server.requests[0].body["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["name"] == "Answer"
    assert sent["json_schema"]["strict"] is True
    schema = sent["json_schema"]["schema"]
    assert schema["required"] == ["word", "count"]
    assert schema["additionalProperties"] is False
    assert "default" not in json.dumps(schema)


async def test_json_object_only_provider_falls_back_and_is_remembered(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.response_formats = frozenset({"json_object"})
    openai_server.push('{"word": "a"}', '{"word": "b"}')
    llm = client(openai_server)
    try:
        first = await llm.chat(HI, schema=SCHEMA)
        second = await llm.chat(HI, schema=SCHEMA)
    finally:
        await llm.aclose()
    assert (first.message.content, second.message.content) == ('{"word": "a"}', '{"word": "b"}')
    # The refused mode is tried once; the later call goes straight to json_object.
    assert formats(openai_server) == ["json_schema", "json_object", "json_object"]
    assert llm.modes.current(llm.base_url, llm.model) == "json_object"


async def test_no_structured_output_at_all_falls_back_to_the_prompt(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.response_formats = frozenset()
    openai_server.push('{"word": "a"}', '{"word": "b"}')
    llm = client(openai_server)
    try:
        await llm.chat(HI, schema=SCHEMA)
        await llm.chat(HI, schema=SCHEMA)
    finally:
        await llm.aclose()
    assert formats(openai_server) == ["json_schema", "json_object", None, None]


async def test_the_mode_is_remembered_per_base_url_and_model() -> None:
    modes = JsonModes()
    with FakeOpenAIServer() as weak, FakeOpenAIServer() as strong:
        weak.response_formats = frozenset({"json_object"})
        weak.push('{"word": "a"}')
        strong.push('{"word": "b"}')
        settings = Settings(llm_model="fake-model", llm_max_retries=0)
        a = OpenAICompatibleClient(settings.with_changes(llm_base_url=weak.base_url), modes=modes)
        b = OpenAICompatibleClient(settings.with_changes(llm_base_url=strong.base_url), modes=modes)
        try:
            await a.chat(HI, schema=SCHEMA)
            await b.chat(HI, schema=SCHEMA)
        finally:
            await a.aclose()
            await b.aclose()
        assert formats(weak) == ["json_schema", "json_object"]
        assert formats(strong) == ["json_schema"]
    assert modes.learnt() == {(a.base_url, "fake-model"): "json_object"}


async def test_a_forced_mode_is_used_as_is_and_never_moved(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.response_formats = frozenset({"json_schema"})
    llm = client(openai_server, llm_json_mode="json_object")
    try:
        with pytest.raises(LLMUnavailable, match="400"):
            await llm.chat(HI, schema=SCHEMA)
    finally:
        await llm.aclose()
    assert formats(openai_server) == ["json_object"]
    prompt_only = client(openai_server, llm_json_mode="prompt")
    openai_server.push('{"word": "x"}')
    try:
        await prompt_only.chat(HI, schema=SCHEMA)
    finally:
        await prompt_only.aclose()
    assert formats(openai_server)[-1] is None


def test_an_unknown_json_mode_is_a_clear_config_error() -> None:
    with pytest.raises(ConfigError, match="YUJI_LLM_JSON_MODE"):
        Settings(llm_json_mode="xml")


async def test_local_validation_and_retries_stay_after_falling_back(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.response_formats = frozenset({"json_object"})
    openai_server.push('{"diary": ""}', '{"diary": "今天大家聊了鱼"}')
    prompt = Prompt((ChatMessage(role="user", content="写日记，只输出 JSON"),), DiaryReply)
    llm = client(openai_server)
    try:
        asked = await ask(llm, prompt, base_temperature=0.7, retries=2, ooc_patterns=())
    finally:
        await llm.aclose()
    assert asked.value.diary == "今天大家聊了鱼"
    assert asked.attempts == 2
    assert asked.reasons[0].startswith("schema: diary")
    assert formats(openai_server) == ["json_schema", "json_object", "json_object"]


# --- reasoning models -------------------------------------------------------------------

THOUGHT = '用户想要日记。我应该写 {"diary": "秘密想法"}'


async def test_reasoning_never_reaches_a_parsed_reply(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(
        Reply(content=f'<think>{THOUGHT}</think>\n{{"diary": "好"}}', reasoning=THOUGHT)
    )
    prompt = Prompt((ChatMessage(role="user", content="写日记"),), DiaryReply)
    llm = client(openai_server)
    try:
        asked = await ask(llm, prompt, base_temperature=0.7, retries=0, ooc_patterns=())
    finally:
        await llm.aclose()
    assert asked.value.diary == "好"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("<think>想一想</think>你好呀", "你好呀"),
        ("<think>\n想\n</think>\n\n你好<think>又想</think>呀", "你好呀"),
        ("想了很久</think>你好", "你好"),
        ("你好<think>想到一半被截断", "你好"),
        ("<THINKING>x</THINKING>嗯", "嗯"),
    ],
)
async def test_think_tags_are_stripped_in_every_shape(
    openai_server: FakeOpenAIServer, content: str, expected: str
) -> None:
    openai_server.push(Reply(content=content, reasoning="内部推理"))
    llm = client(openai_server)
    try:
        reply = await llm.chat(HI)
    finally:
        await llm.aclose()
    assert reply.message.content == expected


async def test_think_never_reaches_qq_nor_the_recorded_reply(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    openai_server.push(
        Reply(content="<think>他在问我，我要假装是人。</think>在呢在呢~", reasoning="秘密推理")
    )
    core = await Yuji.open(
        Settings(
            data_dir=tmp_path / "data", llm_base_url=openai_server.base_url, llm_model="fake-model"
        )
    )
    sent: list[str] = []

    async def send(text: str) -> str:
        sent.append(text)
        return f"bot-{len(sent)}"

    try:
        outcome = await core.chat.respond(incoming("大肥鱼在吗"), send)
    finally:
        await core.close()
    assert outcome.kind == "reply"
    assert sent == ["在呢在呢~"]
    assert all("think" not in part and "推理" not in part for part in outcome.parts)


# --- streaming, rate limits ----------------------------------------------------------------

ADD = ToolSpec("add", "add two numbers", {"type": "object", "properties": {}})


async def test_a_forced_stream_is_read_as_one_answer(openai_server: FakeOpenAIServer) -> None:
    openai_server.stream = True
    usage = {
        "prompt_tokens": 40,
        "completion_tokens": 7,
        "prompt_tokens_details": {"cached_tokens": 32},
    }
    openai_server.push(
        Reply(content="<think>嗯</think>流式的回答，分好几块", reasoning="想", usage=usage),
        Reply.tools(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})),
    )
    llm = client(openai_server)
    try:
        text = await llm.chat(HI)
        calls = await llm.chat(HI, tools=[ADD])
    finally:
        await llm.aclose()
    assert text.message.content == "流式的回答，分好几块"
    assert text.finish_reason == "stop"
    assert text.usage["prompt_tokens"] == 40
    assert text.usage["cached_tokens"] == 32
    assert [json.loads(c.arguments) for c in calls.message.tool_calls] == [
        {"a": 1, "b": 2},
        {"a": 3, "b": 4},
    ]
    assert calls.finish_reason == "tool_calls"


async def test_429_retry_after_is_honoured(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(Reply.error(429, retry_after="2"), "好了")
    waited: list[float] = []

    async def sleep(seconds: float) -> None:
        waited.append(seconds)

    settings = Settings(llm_base_url=openai_server.base_url, llm_model="fake-model")
    llm = OpenAICompatibleClient(settings, sleep=sleep)
    try:
        reply = await llm.chat(HI)
    finally:
        await llm.aclose()
    assert reply.message.content == "好了"
    assert waited == [2.0]
    assert len(openai_server.requests) == 2


# --- no tool calling ----------------------------------------------------------------------


async def test_a_model_without_tools_stops_consolidation_but_chat_works(
    openai_server: FakeOpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.tools_supported = False
    sink = RecordingAlertSink()
    clock = FakeClock(datetime(2026, 11, 20, 12, 0, tzinfo=UTC))
    settings = Settings(
        data_dir=tmp_path / "data",
        llm_base_url=openai_server.base_url,
        llm_model="fake-model",
        eligible_min_pending=1,
    )
    core = await Yuji.open(settings, clock=clock, alert_sink=sink)
    try:
        await core.archive.append(
            NewExperience(
                scope="group:1",
                fingerprint="m1",
                sender_id="200",
                sender_name="阿明",
                text="我下周去杭州出差",
                sent_at=clock.now() - timedelta(minutes=5),
            )
        )
        await core.archive.flush()
        caplog.set_level(logging.ERROR, logger="yuji.consolidation")
        report = await core.consolidation.run_once(force=True)
        assert report is not None
        assert report.lacks_tools
        assert "lacks tool calling" in caplog.text
        # Nothing further is attempted, and the alert fires once.
        assert await core.consolidation.run_once(force=True) is None
        assert "lacks tool calling" in core.consolidation.last_skip
        assert len(openai_server.requests) == 1
        assert [key for key, _ in sink.fired] == ["consolidation:tools"]
        # Chat does not need tools.
        openai_server.push("在的")
        sent: list[str] = []

        async def send(text: str) -> str:
            sent.append(text)
            return "bot-1"

        outcome = await core.chat.respond(incoming("大肥鱼在吗"), send)
        assert (outcome.kind, sent) == ("reply", ["在的"])
        lines = (await core.chat_status.scope_status("group:1")).extra
        assert "不支持工具调用" in lines["整理"]
        data = await status_cli.collect(core)
        assert "不支持工具调用" in data["scopes"][0]["lines"]["整理"]
    finally:
        await core.close()


async def test_tools_refusal_is_its_own_error(openai_server: FakeOpenAIServer) -> None:
    openai_server.tools_supported = False
    llm = client(openai_server)
    try:
        with pytest.raises(LLMToolsUnsupported, match="lacks tool calling"):
            await llm.chat(HI, tools=[ADD])
    finally:
        await llm.aclose()
    assert len(openai_server.requests) == 1
