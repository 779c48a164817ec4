"""A real OpenAI-compatible HTTP server on 127.0.0.1, for tests of the LLM path.

It runs `ThreadingHTTPServer` in a daemon thread, so it serves an in-process client
and a bot running as a subprocess alike (point `YUJI_LLM_BASE_URL` at `server.base_url`).

Script it with a queue (`server.push(...)`) and/or a handler (`server.handler =
fn(request_body) -> Reply | str | None`; None falls through to the queue). Queue items
are `Reply` objects or plain strings (a text answer). Every request is recorded in
`server.requests` (path, lower-cased headers, parsed JSON body), so a test can read
the prompt the model received.

    server.push(Reply.tool("remember", {"x": 1}), Reply.error(429), Reply.slow(5, "late"))

An exhausted queue with no handler answers `server.default` (HTTP 500 unless set).

Provider behaviours, set on the server (checked before the script is consulted):

- `response_formats`: the `response_format` types accepted (default both);
  another type is answered HTTP 400 naming the response format, like DeepSeek;
- `tools_supported=False`: a request carrying `tools` is answered HTTP 400
  "does not support tools", like Ollama for a model without tool calling;
- `stream=True`: every completion goes out as server-sent events;
- `Reply(reasoning=...)` adds `reasoning_content` beside `content`, and
  `Reply(usage=...)` replaces the default `usage` object.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

_call_ids = itertools.count(1)


@dataclass(frozen=True)
class Reply:
    content: str | None = None
    tool_calls: tuple[tuple[str, str], ...] = ()
    """(name, raw JSON arguments) pairs."""
    status: int = 200
    delay_s: float = 0.0
    raw_body: bytes | None = None
    """Sent verbatim instead of a completion (garbage, error bodies)."""
    headers: tuple[tuple[str, str], ...] = ()
    reasoning: str | None = None
    """Sent as `reasoning_content` (a reasoning model's thinking)."""
    usage: dict[str, Any] | None = None

    @staticmethod
    def text(content: str, *, delay_s: float = 0.0) -> Reply:
        return Reply(content=content, delay_s=delay_s)

    @staticmethod
    def tool(name: str, arguments: dict[str, Any] | str, *, content: str | None = None) -> Reply:
        return Reply.tools((name, arguments), content=content)

    @staticmethod
    def tools(*calls: tuple[str, dict[str, Any] | str], content: str | None = None) -> Reply:
        raw = tuple(
            (name, args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))
            for name, args in calls
        )
        return Reply(content=content, tool_calls=raw)

    @staticmethod
    def error(
        status: int, body: str = '{"error": {"message": "scripted"}}', **headers: str
    ) -> Reply:
        return Reply(
            status=status,
            raw_body=body.encode(),
            headers=tuple((k.replace("_", "-"), v) for k, v in headers.items()),
        )

    @staticmethod
    def garbage(body: bytes = b"<html>not json") -> Reply:
        return Reply(raw_body=body)

    @staticmethod
    def slow(delay_s: float, content: str = "slow") -> Reply:
        return Reply(content=content, delay_s=delay_s)


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def prompt_text(self) -> str:
        """Every message's text content, joined: what a test greps for."""
        return "\n".join(str(m.get("content") or "") for m in self.messages)


Handler = Callable[[dict[str, Any]], "Reply | str | None"]


@dataclass
class FakeOpenAIServer:
    model: str = "fake-model"
    default: Reply = field(
        default_factory=lambda: Reply.error(500, '{"error": "script exhausted"}')
    )
    handler: Handler | None = None
    response_formats: frozenset[str] = frozenset({"json_schema", "json_object"})
    tools_supported: bool = True
    stream: bool = False
    requests: list[RecordedRequest] = field(default_factory=list[RecordedRequest])
    _queue: deque[Reply | str] = field(default_factory=deque[Reply | str])
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _httpd: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        server = self

        class _RequestHandler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparseable": raw.decode("utf-8", "replace")}
                headers = {k.lower(): v for k, v in self.headers.items()}
                server._record(RecordedRequest(self.path, headers, body))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": "not found"}', ())
                    return
                refusal = server.refusal(body)
                reply = refusal or server._next_reply(body)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.raw_body is not None:
                    self._send(reply.status, reply.raw_body, reply.headers)
                elif server.stream:
                    payload = server.events(server.completion(reply))
                    self._send(reply.status, payload, reply.headers, "text/event-stream")
                else:
                    payload = json.dumps(server.completion(reply), ensure_ascii=False).encode()
                    self._send(reply.status, payload, reply.headers)

            def _send(
                self,
                status: int,
                payload: bytes,
                headers: tuple[tuple[str, str], ...],
                content_type: str = "application/json",
            ) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in headers:
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _RequestHandler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def env(self, api_key: str = "test-key") -> dict[str, str]:
        """Environment for a bot subprocess talking to this server."""
        return {
            "YUJI_LLM_BASE_URL": self.base_url,
            "YUJI_LLM_MODEL": self.model,
            "YUJI_LLM_API_KEY": api_key,
        }

    # --- scripting ---------------------------------------------------------------------
    def push(self, *replies: Reply | str) -> None:
        with self._lock:
            self._queue.extend(replies)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        if self.handler is not None:
            result = self.handler(body)
            if result is not None:
                return Reply.text(result) if isinstance(result, str) else result
        with self._lock:
            item = self._queue.popleft() if self._queue else self.default
        return Reply.text(item) if isinstance(item, str) else item

    def refusal(self, body: dict[str, Any]) -> Reply | None:
        """What a provider lacking a feature the request uses answers, or None."""
        kind = (body.get("response_format") or {}).get("type")
        if kind is not None and kind not in self.response_formats:
            return Reply.error(
                400,
                json.dumps({"error": {"message": f"response_format type {kind} is unavailable"}}),
            )
        if body.get("tools") and not self.tools_supported:
            message = f"registry.ollama.ai/library/{self.model} does not support tools"
            return Reply.error(400, json.dumps({"error": {"message": message}}))
        return None

    def events(self, completion: dict[str, Any]) -> bytes:
        """`completion` as server-sent chunks: the content in pieces, each tool call's
        arguments in two halves, usage on the last chunk, then `[DONE]`."""
        message = completion["choices"][0]["message"]
        chunks: list[dict[str, Any]] = [{"role": "assistant"}]
        if message.get("reasoning_content"):
            chunks.append({"reasoning_content": message["reasoning_content"]})
        content = message.get("content") or ""
        chunks += [{"content": content[i : i + 3]} for i in range(0, len(content), 3)]
        for index, call in enumerate(message.get("tool_calls") or []):
            args = call["function"]["arguments"]
            half = len(args) // 2
            chunks.append(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {
                                "name": call["function"]["name"],
                                "arguments": args[:half],
                            },
                        }
                    ]
                }
            )
            chunks.append(
                {"tool_calls": [{"index": index, "function": {"arguments": args[half:]}}]}
            )
        finish = completion["choices"][0]["finish_reason"]
        lines: list[str] = []
        for i, delta in enumerate(chunks):
            last = i == len(chunks) - 1
            event: dict[str, Any] = {
                "id": completion["id"],
                "object": "chat.completion.chunk",
                "choices": [
                    {"index": 0, "delta": delta, "finish_reason": finish if last else None}
                ],
            }
            if last:
                event["usage"] = completion["usage"]
            lines.append(f"data: {json.dumps(event, ensure_ascii=False)}\n\n")
        lines.append("data: [DONE]\n\n")
        return "".join(lines).encode()

    def completion(self, reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.reasoning is not None:
            message["reasoning_content"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{next(_call_ids)}",
                    "type": "function",
                    "function": {"name": name, "arguments": args},
                }
                for name, args in reply.tool_calls
            ]
        return {
            "id": f"chatcmpl-{next(_call_ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": reply.usage or {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    """A started fake server; import this fixture into a test module or conftest."""
    with FakeOpenAIServer() as server:
        yield server
