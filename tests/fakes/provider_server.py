"""A real embeddings and rerank API on 127.0.0.1, for tests and benchmarks of the recall
models from providers (memory_core/providers/).

It serves, in a daemon thread (so a bot subprocess can use it too):

- `POST /v1/embeddings` (OpenAI): one vector per input from `embed(text)`, by default
  a bag of hashed characters (texts sharing characters are close), with a `usage`;
- `POST /v1/rerank` (Jina, Cohere, SiliconFlow, Xinference, vLLM): `results` of
  `index` and `relevance_score` from `score(query, document)`, by default the share
  of the query's character bigrams the document holds;
- `POST /rerank` (TEI): the same scores as a list of `index` and `score`, for `texts`.

Faults are scripted per request with `push(Fault(...))` (a status with an optional
Retry-After, a delay, a garbage body); `delay_s` delays every answer. Every request is
recorded in `requests` (path, parsed body, authorization header).
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

DIM = 32


def hashed_vector(text: str, dim: int = DIM) -> list[float]:
    row = np.zeros(dim)
    for ch in text:
        bucket = int.from_bytes(hashlib.blake2b(ch.encode(), digest_size=4).digest())
        row[bucket % dim] += 1.0
    return [float(v) for v in row] if row.any() else [1.0] + [0.0] * (dim - 1)


def bigrams(text: str) -> set[str]:
    chars = "".join(text.lower().split())
    return {chars[i : i + 2] for i in range(len(chars) - 1)}


def bigram_share(query: str, document: str) -> float:
    """The share of the query's character bigrams the document holds."""
    wanted = bigrams(query)
    if not wanted:
        return 0.0
    held = bigrams(document)
    return len(wanted & held) / len(wanted)


@dataclass(frozen=True)
class Fault:
    status: int = 200
    delay_s: float = 0.0
    body: bytes | None = None
    retry_after: str | None = None

    @staticmethod
    def error(status: int, retry_after: str | None = None) -> Fault:
        return Fault(status=status, body=b'{"error": "scripted"}', retry_after=retry_after)

    @staticmethod
    def garbage(body: bytes = b"<html>not json") -> Fault:
        return Fault(body=body)

    @staticmethod
    def slow(delay_s: float) -> Fault:
        return Fault(delay_s=delay_s)


@dataclass(frozen=True)
class Request:
    path: str
    body: dict[str, Any]
    authorization: str


@dataclass
class ProviderServer:
    embed: Callable[[str], list[float]] = hashed_vector
    score: Callable[[str, str], float] = bigram_share
    delay_s: float = 0.0
    requests: list[Request] = field(default_factory=list[Request])
    _faults: deque[Fault] = field(default_factory=deque[Fault])
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _httpd: ThreadingHTTPServer | None = None

    def start(self, port: int = 0) -> ProviderServer:
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in two writes: without this, Nagle holds the
                # body for the client's delayed ACK (~40 ms), a cost no real server has.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                auth = self.headers.get("Authorization") or ""
                with server._lock:
                    server.requests.append(Request(self.path, body, auth))
                    fault = server._faults.popleft() if server._faults else None
                delay = server.delay_s + (fault.delay_s if fault else 0.0)
                if delay:
                    time.sleep(delay)
                if fault is not None and fault.body is not None:
                    headers = (("Retry-After", fault.retry_after),) if fault.retry_after else ()
                    self._send(fault.status, fault.body, headers)
                    return
                try:
                    answer = server.answer(self.path, body)
                except (KeyError, TypeError, ValueError) as exc:
                    self._send(422, json.dumps({"error": str(exc)}).encode(), ())
                    return
                if answer is None:
                    self._send(404, b'{"error": "not found"}', ())
                    return
                self._send(200, json.dumps(answer, ensure_ascii=False).encode(), ())

            def _send(
                self, status: int, payload: bytes, headers: tuple[tuple[str, str], ...]
            ) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in headers:
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        httpd = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ProviderServer:
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

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def push(self, *faults: Fault) -> None:
        with self._lock:
            self._faults.extend(faults)

    def paths(self) -> list[str]:
        with self._lock:
            return [r.path for r in self.requests]

    def answer(self, path: str, body: dict[str, Any]) -> Any:
        if path == "/v1/embeddings":
            texts = body["input"]
            texts = [texts] if isinstance(texts, str) else list(texts)
            data = [
                {"object": "embedding", "index": i, "embedding": self.embed(t)}
                for i, t in enumerate(texts)
            ]
            tokens = sum(len(t) for t in texts)
            return {
                "data": data,
                "model": body.get("model"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        if path == "/v1/rerank":
            query, docs = body["query"], list(body["documents"])
            results = [
                {"index": i, "relevance_score": self.score(query, d)} for i, d in enumerate(docs)
            ]
            results.sort(key=lambda r: -r["relevance_score"])
            tokens = len(query) * len(docs) + sum(len(d) for d in docs)
            return {
                "results": results[: int(body.get("top_n") or len(docs))],
                "usage": {"total_tokens": tokens},
            }
        if path == "/rerank":
            query, texts = body["query"], list(body["texts"])
            return [{"index": i, "score": self.score(query, t)} for i, t in enumerate(texts)]
        return None


@pytest.fixture
def provider_server() -> Iterator[ProviderServer]:
    with ProviderServer() as server:
        yield server
