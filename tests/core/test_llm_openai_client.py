"""OpenAICompatibleClient against a real HTTP server on loopback."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx
import pytest

from memory_core import Settings, Yuji
from memory_core.errors import LLMBadResponse, LLMRateLimited, LLMTimeout, LLMUnavailable
from memory_core.llm import ChatMessage, OpenAICompatibleClient, ToolCall, ToolSpec
from memory_core.llm.openai_client import parse_response, request_body
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

__all__ = ["openai_server"]

SECRET = "sk-very-secret-key-123"

WEATHER = ToolSpec(
    name="get_weather",
    description="weather of a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def make_client(
    server: FakeOpenAIServer, *, retries: int = 3, timeout_s: float = 5.0
) -> OpenAICompatibleClient:
    settings = Settings(
        llm_base_url=server.base_url,
        llm_model="fake-model",
        llm_api_key=SECRET,
        llm_max_retries=retries,
        llm_timeout_s=timeout_s,
    )
    return OpenAICompatibleClient(settings, backoff_base_s=0.001)


async def test_tool_call_round_trip(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(Reply.tool("get_weather", {"city": "上海"}), Reply.text("上海晴"))
    client = make_client(openai_server)
    try:
        messages = [ChatMessage(role="user", content="上海天气？")]
        first = await client.chat(messages, tools=[WEATHER], temperature=0.1)
        assert first.finish_reason == "tool_calls"
        (call,) = first.message.tool_calls
        assert call.name == "get_weather"
        assert json.loads(call.arguments) == {"city": "上海"}

        messages += [
            first.message,
            ChatMessage(role="tool", content="晴，20度", tool_call_id=call.id),
        ]
        second = await client.chat(messages, tools=[WEATHER])
        assert second.message.content == "上海晴"
        assert second.message.tool_calls == ()
    finally:
        await client.aclose()

    first_req, second_req = openai_server.requests
    assert first_req.path == "/v1/chat/completions"
    assert first_req.headers["authorization"] == f"Bearer {SECRET}"
    assert first_req.body["model"] == "fake-model"
    assert first_req.body["temperature"] == 0.1
    assert first_req.body["tools"][0]["type"] == "function"
    assert first_req.body["tools"][0]["function"]["name"] == "get_weather"
    echoed = second_req.body["messages"]
    assert echoed[1]["tool_calls"][0]["id"] == call.id
    assert echoed[1]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert echoed[2] == {"role": "tool", "content": "晴，20度", "tool_call_id": call.id}
    assert second_req.body["temperature"] == Settings().llm_temperature


@pytest.mark.parametrize("status", [429, 500, 502, 503])
async def test_retryable_status_then_success(openai_server: FakeOpenAIServer, status: int) -> None:
    openai_server.push(Reply.error(status), Reply.error(status), Reply.text("终于"))
    client = make_client(openai_server, retries=3)
    try:
        response = await client.chat([ChatMessage(role="user", content="hi")])
    finally:
        await client.aclose()
    assert response.message.content == "终于"
    assert len(openai_server.requests) == 3


async def test_429_after_every_retry_is_rate_limited(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(*[Reply.error(429, retry_after="0")] * 3)
    client = make_client(openai_server, retries=2)
    try:
        with pytest.raises(LLMRateLimited):
            await client.chat([ChatMessage(role="user", content="hi")])
    finally:
        await client.aclose()
    assert len(openai_server.requests) == 3


async def test_500_after_every_retry_is_unavailable(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(*[Reply.error(500)] * 2)
    client = make_client(openai_server, retries=1)
    try:
        with pytest.raises(LLMUnavailable):
            await client.chat([ChatMessage(role="user", content="hi")])
    finally:
        await client.aclose()
    assert len(openai_server.requests) == 2


async def test_client_errors_are_not_retried(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(Reply.error(401, '{"error": "bad key"}'), Reply.text("never"))
    client = make_client(openai_server)
    try:
        with pytest.raises(LLMUnavailable, match="401"):
            await client.chat([ChatMessage(role="user", content="hi")])
    finally:
        await client.aclose()
    assert len(openai_server.requests) == 1


async def test_slow_model_hits_the_hard_timeout(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(Reply.slow(2.0))
    client = make_client(openai_server)
    try:
        with pytest.raises(LLMTimeout):
            await client.chat([ChatMessage(role="user", content="hi")], timeout_s=0.2)
    finally:
        await client.aclose()


async def test_timeout_bounds_retries_too(openai_server: FakeOpenAIServer) -> None:
    # Retry-After would make the client wait 30s; the deadline cuts that short.
    openai_server.push(*[Reply.error(503, retry_after="30")] * 5)
    client = make_client(openai_server, retries=4)
    try:
        with pytest.raises(LLMTimeout):
            # 1s: long enough for the first request on a loaded machine, far below 30s.
            await client.chat([ChatMessage(role="user", content="hi")], timeout_s=1.0)
    finally:
        await client.aclose()
    assert len(openai_server.requests) == 1


async def test_garbage_json_is_a_bad_response(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(Reply.garbage(b"<html>oops"), Reply.garbage(b'{"choices": []}'))
    client = make_client(openai_server)
    try:
        with pytest.raises(LLMBadResponse, match="not JSON"):
            await client.chat([ChatMessage(role="user", content="hi")])
        with pytest.raises(LLMBadResponse, match="no choices"):
            await client.chat([ChatMessage(role="user", content="hi")])
    finally:
        await client.aclose()
    assert len(openai_server.requests) == 2


async def test_connection_refused_is_unavailable_after_retries(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        port = server.port
    settings = Settings(
        llm_base_url=f"http://127.0.0.1:{port}/v1", llm_model="m", llm_max_retries=2
    )
    client = OpenAICompatibleClient(settings, backoff_base_s=0.001)
    try:
        with pytest.raises(LLMUnavailable, match="transport"):
            await client.chat([ChatMessage(role="user", content="hi")])
    finally:
        await client.aclose()


@pytest.mark.parametrize(
    "body",
    [
        '{"error": "nope"}',
        # A server may echo the key back in its error body.
        json.dumps({"error": f"invalid api key: Bearer {SECRET}"}),
    ],
    ids=["plain", "echoed"],
)
async def test_key_never_logged_nor_in_errors(
    openai_server: FakeOpenAIServer, caplog: pytest.LogCaptureFixture, body: str
) -> None:
    openai_server.push(Reply.error(500, body), Reply.error(401, body))
    client = make_client(openai_server, retries=1)
    caplog.set_level(logging.DEBUG)
    try:
        with pytest.raises(LLMUnavailable) as info:
            await client.chat([ChatMessage(role="user", content="hi")])
    finally:
        await client.aclose()
    assert "401" in str(info.value)
    assert SECRET not in str(info.value)
    assert SECRET not in repr(client)
    assert SECRET not in caplog.text
    assert "retry 1/1" in caplog.text


def test_parse_response_accepts_object_arguments_and_rejects_shapes() -> None:
    payload = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"total_tokens": 3, "detail": {"x": 1}},
    }
    response = parse_response(payload)
    assert response.message.tool_calls == (ToolCall(id="call_0", name="f", arguments='{"a": 1}'),)
    assert response.usage == {"total_tokens": 3}
    for bad in ([], {"choices": [{"message": "x"}]}, {"choices": [{"message": {"content": 3}}]}):
        with pytest.raises(LLMBadResponse):
            parse_response(bad)
    with pytest.raises(LLMBadResponse):
        parse_response({"choices": [{"message": {"tool_calls": [{"function": {}}]}}]})


def test_request_body_without_tools_has_no_tool_keys() -> None:
    body = request_body(
        "m", [ChatMessage(role="system", content="s")], tools=None, temperature=None
    )
    assert body == {"model": "m", "messages": [{"role": "system", "content": "s"}]}


async def test_mock_transport_is_injectable() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/chat/completions"
        return httpx.Response(200, json={"choices": [{"message": {"content": "ok"}}]})

    settings = Settings(llm_base_url="http://example.invalid/v1/", llm_model="m")
    client = OpenAICompatibleClient(settings, transport=httpx.MockTransport(answer))
    try:
        response = await client.chat([ChatMessage(role="user", content="x")])
    finally:
        await client.aclose()
    assert response.message.content == "ok"


async def test_core_llm_is_none_unless_configured(tmp_path: Path) -> None:
    bare = await Yuji.open(Settings(data_dir=tmp_path / "a"))
    try:
        assert bare.llm is None
    finally:
        await bare.close()
    configured = await Yuji.open(
        Settings(data_dir=tmp_path / "b", llm_base_url="http://127.0.0.1:9/v1", llm_model="m")
    )
    try:
        assert isinstance(configured.llm, OpenAICompatibleClient)
    finally:
        await configured.close()


def test_unconfigured_client_refuses() -> None:
    with pytest.raises(LLMUnavailable):
        OpenAICompatibleClient(Settings())
