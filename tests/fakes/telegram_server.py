"""A fake Telegram Bot API server on 127.0.0.1, for alert tests.

It speaks the Bot API's HTTP shape: `POST /bot<token>/<method>` with the parameters
form-encoded (what python-telegram-bot sends), multipart, or JSON, answered with
`{"ok": true, "result": ...}` or `{"ok": false, "error_code": ..., "description": ...}`.
It runs `ThreadingHTTPServer` in a daemon thread, so an in-process sink and a bot
subprocess (`YUJI_TELEGRAM_BASE_URL=server.base_url`) can both use it.

- `server.messages`: every accepted `sendMessage` (chat_id, text);
  `server.requests`: every request (token, method, parsed params).
- A bot's side too (nonebot-adapter-telegram polling it): `server.push_update(...)`
  queues an update `getUpdates` hands out (long-polled, by offset), `server.admins`
  holds the (chat id, user id) pairs `getChatMember` calls administrators, and
  `server.sent(chat_id)` lists what the bot sent to a chat; `deleteWebhook` succeeds.
- `server.hold()` makes requests hang until `server.release()` (a slow Telegram);
  `server.fail_next(status, description)` scripts Bot API errors; `server.fail_when`
  (request -> (status, description) or None) answers the requests it picks with an
  error while it is set (one method, one text, whatever the polling does meanwhile);
  `closed_port()` gives a loopback port where nothing listens (Telegram down).
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

import pytest

TOKEN = "123456:TEST-token_for-the-fake"


@dataclass(frozen=True)
class BotApiRequest:
    token: str
    method: str
    params: dict[str, str]
    content_type: str


@dataclass(frozen=True)
class SentMessage:
    chat_id: str
    text: str


def parse_params(content_type: str, raw: bytes) -> dict[str, str]:
    """Bot API parameters from any of the three encodings the API accepts."""
    kind = content_type.split(";")[0].strip().lower()
    if kind == "application/json":
        data: dict[str, Any] = json.loads(raw or b"{}")
        return {k: v if isinstance(v, str) else json.dumps(v) for k, v in data.items()}
    if kind == "multipart/form-data":
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw
        )
        params: dict[str, str] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(payload, bytes):
                params[name] = payload.decode("utf-8")
        return params
    return dict(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))


@dataclass
class FakeTelegramServer:
    token: str = TOKEN
    requests: list[BotApiRequest] = field(default_factory=list[BotApiRequest])
    _errors: deque[tuple[int, str]] = field(default_factory=deque[tuple[int, str]])
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _open: threading.Event = field(default_factory=threading.Event)
    _httpd: ThreadingHTTPServer | None = None
    updates: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    admins: set[tuple[int, int]] = field(default_factory=set[tuple[int, int]])
    _new_update: threading.Condition = field(default_factory=threading.Condition)
    fail_when: Callable[[BotApiRequest], tuple[int, str] | None] | None = None

    def start(self) -> FakeTelegramServer:
        server = self
        self._open.set()

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, body = server._answer(self.path, self.headers.get("Content-Type", ""), raw)
                payload = json.dumps(body, ensure_ascii=False).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

            do_GET = do_POST

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        self._open.set()  # let held requests finish
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeTelegramServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/bot"

    def env(self, chat_id: str = "4242") -> dict[str, str]:
        return {
            "YUJI_TELEGRAM_BOT_TOKEN": self.token,
            "YUJI_TELEGRAM_CHAT_ID": chat_id,
            "YUJI_TELEGRAM_BASE_URL": self.base_url,
        }

    # --- scripting ---------------------------------------------------------------------
    def hold(self) -> None:
        """Requests received from now on wait (unanswered) until `release()`."""
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    def fail_next(self, status: int = 500, description: str = "Internal Server Error") -> None:
        with self._lock:
            self._errors.append((status, description))

    def push_update(self, message: dict[str, Any]) -> int:
        """Queue `{"update_id": n, "message": message}` for getUpdates; returns n."""
        with self._new_update:
            update_id = len(self.updates) + 1
            self.updates.append({"update_id": update_id, "message": message})
            self._new_update.notify_all()
        return update_id

    def sent(self, chat_id: int) -> list[dict[str, str]]:
        """The params of every sendMessage to `chat_id`."""
        with self._lock:
            return [
                r.params
                for r in self.requests
                if r.method == "sendMessage" and r.params.get("chat_id") == str(chat_id)
            ]

    def _get_updates(self, params: dict[str, str]) -> list[dict[str, Any]]:
        offset = int(params["offset"]) if params.get("offset") else 0
        wait = min(float(params.get("timeout") or 0), 1.0)
        with self._new_update:
            self._new_update.wait_for(lambda: len(self.updates) >= max(offset, 1), wait)
            return [u for u in self.updates if u["update_id"] >= offset]

    def _chat_member(self, params: dict[str, str]) -> dict[str, Any]:
        chat_id, user_id = int(params["chat_id"]), int(params["user_id"])
        user = {"id": user_id, "is_bot": False, "first_name": f"user{user_id}"}
        if (chat_id, user_id) in self.admins:
            return {"status": "creator", "user": user, "is_anonymous": False}
        return {"status": "member", "user": user}

    @property
    def messages(self) -> list[SentMessage]:
        with self._lock:
            return [
                SentMessage(r.params.get("chat_id", ""), r.params.get("text", ""))
                for r in self.requests
                if r.method == "sendMessage" and r.token == self.token
            ]

    # --- the Bot API -------------------------------------------------------------------
    def _answer(self, path: str, content_type: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        prefix, _, method = path.lstrip("/").partition("/")
        token = prefix.removeprefix("bot")
        params = parse_params(content_type, raw)
        with self._lock:
            self.requests.append(BotApiRequest(token, method, params, content_type))
        self._open.wait()
        if not prefix.startswith("bot") or token != self.token:
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        with self._lock:
            scripted = self._errors.popleft() if self._errors else None
        if scripted is None and self.fail_when is not None:
            scripted = self.fail_when(BotApiRequest(token, method, params, content_type))
        if scripted is not None:
            status, description = scripted
            return status, {"ok": False, "error_code": status, "description": description}
        if method == "getMe":
            return 200, {"ok": True, "result": _bot_user()}
        if method == "deleteWebhook":
            return 200, {"ok": True, "result": True}
        if method == "getUpdates":
            return 200, {"ok": True, "result": self._get_updates(params)}
        if method == "getChatMember":
            return 200, {"ok": True, "result": self._chat_member(params)}
        if method != "sendMessage":
            return 404, {"ok": False, "error_code": 404, "description": "Not Found"}
        if not params.get("chat_id") or not params.get("text"):
            return 400, {
                "ok": False,
                "error_code": 400,
                "description": "Bad Request: text is empty",
            }
        return 200, {"ok": True, "result": _message(params)}


_message_ids = itertools.count(1)


def _bot_user() -> dict[str, Any]:
    return {"id": 123456, "is_bot": True, "first_name": "yuji alerts", "username": "yuji_bot"}


def _message(params: dict[str, str]) -> dict[str, Any]:
    chat_id = params["chat_id"]
    numeric = chat_id.lstrip("-").isdigit()
    return {
        "message_id": next(_message_ids),
        "date": int(time.time()),
        "chat": {
            "id": int(chat_id) if numeric else -1001234567890,
            "type": "private" if numeric and not chat_id.startswith("-") else "supergroup",
        },
        "from": _bot_user(),
        "text": params["text"],
    }


def closed_port() -> int:
    """A loopback port with nothing listening on it (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def telegram_server() -> Iterator[FakeTelegramServer]:
    with FakeTelegramServer() as server:
        yield server
