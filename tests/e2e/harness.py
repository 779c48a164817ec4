"""End-to-end harness: the real bot in a subprocess, and a OneBot v11 peer for it.

`BotProcess` runs `python bot.py` from the repository root with its own data folder,
a free 127.0.0.1 port and whatever environment you add (the parent's `YUJI_*` and
`ONEBOT_*` variables are dropped; a `.env` in the checkout is still read by NoneBot
unless `clean_cwd=True`, which runs a copy of bot.py in an empty folder); its stdout+stderr go to `<tmp>/bot.log` (`bot.log_text()`). `OnebotPeer` plays NapCat: it connects to
`ws://127.0.0.1:PORT/onebot/v11/ws` with `X-Self-ID`, `X-Client-Role: Universal`
and `Authorization: Bearer <token>`, sends events, and answers the bot's API calls
(`{"action", "params", "echo"}`) with a pluggable handler, recording every call.

Typical use (see tests/e2e/test_archive_e2e.py):

    async def test_something(tmp_path: Path) -> None:
        async with running_bot(tmp_path, env={"YUJI_LLM_BASE_URL": server.base_url}) as bot:
            async with bot.peer() as peer:          # connects, sends lifecycle + heartbeat
                await peer.send_event(peer.group_message("hi", group_id=1, message_id=1))
                call = await peer.wait_for_call("send_group_msg")   # the bot's reply
            await wait_until(lambda: count_rows(bot.data_dir, "experiences") == 1)

- `peer.handler = fn(action, params) -> data` replaces the default answers (raise
  `ApiFailed(retcode)` to answer a failure). Default: `send_*` return a fresh
  `message_id`, `get_login_info` the peer's id, `get_msg` fails (unknown message),
  anything else `None`.
- `peer.calls` lists every `ApiCall(action, params, echo)` the bot made.
- `peer.send_raw(text)` sends a frame verbatim (malformed input).
- `count_rows` / `query` read the bot's SQLite file directly (WAL allows it while the
  bot runs); `wait_until` polls an async or sync predicate.

The bot is stopped with SIGINT (NoneBot's shutdown hooks run, the archive flushes)
and killed if it does not exit in time.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SELF_ID = 1234567
DEFAULT_TOKEN = "e2e-token"
START_TIMEOUT_S = 90.0
WAIT_S = 120.0
"""Default patience of `wait_until` / `wait_for_call`: generous, because the machine
may be busy; a passing test never waits for it."""


def free_port() -> int:
    """A port free now, below the kernel's ephemeral range (32768-60999 on Linux): a port
    the kernel hands out could be taken, before the bot binds it, by any test's outgoing
    connection on this busy machine."""
    for _ in range(200):
        port = random.randrange(20000, 32000)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port between 20000 and 32000")


async def wait_until(
    predicate: Callable[[], Any], *, timeout_s: float = WAIT_S, interval: float = 0.1
) -> Any:
    """Poll `predicate` (sync or async) until it returns something truthy; return it."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"condition not met within {timeout_s}s")
        await asyncio.sleep(interval)


# --- the bot ------------------------------------------------------------------------


class BotProcess:
    def __init__(
        self,
        tmp_path: Path,
        *,
        env: Mapping[str, str] | None = None,
        access_token: str = DEFAULT_TOKEN,
        port: int | None = None,
        clean_cwd: bool = False,
        cwd: Path | None = None,
        python: str = sys.executable,
    ) -> None:
        self.tmp_path = tmp_path
        self.cwd = cwd or ROOT
        self.python = python
        """`cwd`/`python`: another project's bot.py, run by another environment's Python
        (tests/e2e/host_project.py)."""
        if clean_cwd:
            # A working directory with no `.env` at all: a copy of bot.py (the plugin
            # is imported from this checkout, by PYTHONPATH below).
            self.cwd = tmp_path / "cwd"
            if not self.cwd.exists():
                self.cwd.mkdir(parents=True)
                shutil.copy2(ROOT / "bot.py", self.cwd / "bot.py")
        self.data_dir = tmp_path / "data"
        self.port = port or free_port()
        self.access_token = access_token
        self.log_path = tmp_path / "bot.log"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("YUJI_", "ONEBOT_"))},
            "YUJI_DATA_DIR": str(self.data_dir),
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "ONEBOT_ACCESS_TOKEN": access_token,
            # A copied bot.py still imports this checkout's memory_core, not whichever
            # one the environment's editable install points at.
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            "LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        self._proc: asyncio.subprocess.Process | None = None

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/onebot/v11/ws"

    @property
    def database(self) -> Path:
        return self.data_dir / "yuji.db"

    async def start(self, timeout_s: float = START_TIMEOUT_S) -> None:
        self.tmp_path.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self._proc = await asyncio.create_subprocess_exec(
                self.python,
                str(self.cwd / "bot.py"),
                cwd=self.cwd,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout_s
        while not await self._listening():
            if self._proc.returncode is not None:
                raise RuntimeError(f"bot exited with {self._proc.returncode}:\n{self.log_text()}")
            if time.monotonic() > deadline:
                await self.stop()
                raise TimeoutError(f"bot not listening after {timeout_s}s:\n{self.log_text()}")
            await asyncio.sleep(0.2)

    async def _listening(self) -> bool:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", self.port)
        except OSError:
            return False
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return True

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    async def stop(
        self, sig: signal.Signals = signal.SIGINT, timeout_s: float = 20.0
    ) -> int | None:
        """`sig` (SIGINT or SIGTERM: graceful, shutdown hooks run), SIGKILL after
        `timeout_s`; the exit code."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.returncode is None:
            proc.send_signal(sig)
            try:
                await asyncio.wait_for(proc.wait(), timeout_s)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        return proc.returncode

    def run_to_exit(
        self, timeout_s: float = START_TIMEOUT_S, *, prefix: Sequence[str] = ()
    ) -> subprocess.CompletedProcess[str]:
        """Run a bot expected to refuse to start; its exit status and output (`prefix`:
        a command to run it under, e.g. `setpriv` to run it as another user)."""
        return subprocess.run(
            [*prefix, self.python, str(self.cwd / "bot.py")],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )

    def log_text(self) -> str:
        return self.log_path.read_text("utf-8", errors="replace") if self.log_path.exists() else ""

    def peer(
        self, *, self_id: int = DEFAULT_SELF_ID, access_token: str | None = None
    ) -> OnebotPeer:
        token = self.access_token if access_token is None else access_token
        return OnebotPeer(self.ws_url, self_id=self_id, access_token=token)


@contextlib.asynccontextmanager
async def running_bot(
    tmp_path: Path,
    *,
    env: Mapping[str, str] | None = None,
    access_token: str = DEFAULT_TOKEN,
    clean_cwd: bool = False,
) -> AsyncGenerator[BotProcess]:
    bot = BotProcess(tmp_path, env=env, access_token=access_token, clean_cwd=clean_cwd)
    await bot.start()
    try:
        yield bot
    finally:
        await bot.stop()


# --- the OneBot v11 peer -------------------------------------------------------------


class ApiFailed(Exception):
    """Raise from a handler to answer `{"status": "failed", "retcode": ...}`."""

    def __init__(self, retcode: int = 100, message: str = "failed") -> None:
        super().__init__(message)
        self.retcode = retcode


@dataclass(frozen=True)
class ApiCall:
    action: str
    params: dict[str, Any]
    echo: Any


Handler = Callable[[str, dict[str, Any]], Any]


@dataclass
class OnebotPeer:
    url: str
    self_id: int = DEFAULT_SELF_ID
    access_token: str = DEFAULT_TOKEN
    handler: Handler | None = None
    calls: list[ApiCall] = field(default_factory=list[ApiCall])
    _ws: ClientConnection | None = None
    _reader: asyncio.Task[None] | None = None
    _message_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(900_000))
    _new_call: asyncio.Event = field(default_factory=asyncio.Event)

    async def connect(self, *, lifecycle: bool = True) -> OnebotPeer:
        headers = {"X-Self-ID": str(self.self_id), "X-Client-Role": "Universal"}
        if self.access_token:
            headers["Authorization"] = f"Bearer {self.access_token}"
        self._ws = await websockets.connect(
            self.url, additional_headers=headers, max_size=None, open_timeout=30
        )
        self._reader = asyncio.create_task(self._read(), name="onebot-peer-reader")
        if lifecycle:
            await self.send_event(self.meta("lifecycle", sub_type="connect"))
            await self.heartbeat()
        return self

    async def __aenter__(self) -> OnebotPeer:
        return await self.connect()

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        return self._ws is not None and self._ws.close_code is None

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        self._ws = None
        self._reader = None

    # sending ------------------------------------------------------------------------

    async def send_event(self, event: Mapping[str, Any]) -> None:
        await self.send_raw(json.dumps(event, ensure_ascii=False))

    async def send_raw(self, frame: str) -> None:
        if self._ws is None:
            raise RuntimeError("peer not connected")
        await self._ws.send(frame)

    async def heartbeat(self) -> None:
        await self.send_event(
            self.meta("heartbeat", status={"online": True, "good": True}, interval=5000)
        )

    # API calls from the bot -----------------------------------------------------------

    async def wait_for_call(
        self,
        action: str,
        predicate: Callable[[ApiCall], bool] = lambda _call: True,
        *,
        timeout_s: float = WAIT_S,
        start: int = 0,
    ) -> ApiCall:
        """The first call of `action` (from index `start` of `calls`) matching `predicate`."""
        deadline = time.monotonic() + timeout_s
        while True:
            for call in self.calls[start:]:
                if call.action == action and predicate(call):
                    return call
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {action} call within {timeout_s}s; got {self.calls}")
            self._new_call.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._new_call.wait(), remaining)

    async def _read(self) -> None:
        assert self._ws is not None
        async for frame in self._ws:
            try:
                request = json.loads(frame)
            except ValueError:
                continue
            if not isinstance(request, dict) or "action" not in request:
                continue
            call = ApiCall(
                str(request["action"]), dict(request.get("params") or {}), request.get("echo")
            )
            self.calls.append(call)
            self._new_call.set()
            await self._ws.send(json.dumps(await self._answer(call), ensure_ascii=False))

    async def _answer(self, call: ApiCall) -> dict[str, Any]:
        try:
            data = (self.handler or self.default_handler)(call.action, call.params)
            if inspect.isawaitable(data):
                data = await data
        except ApiFailed as failed:
            return {
                "status": "failed",
                "retcode": failed.retcode,
                "data": None,
                "message": str(failed),
                "wording": str(failed),
                "echo": call.echo,
            }
        return {"status": "ok", "retcode": 0, "data": data, "echo": call.echo}

    def default_handler(self, action: str, params: dict[str, Any]) -> Any:
        if action in ("send_group_msg", "send_private_msg", "send_msg"):
            return {"message_id": next(self._message_ids)}
        if action == "get_login_info":
            return {"user_id": self.self_id, "nickname": "大肥鱼"}
        if action == "get_msg":
            raise ApiFailed(1200, "message not found")
        return None

    # event builders (NapCat shapes, message format `array`) ---------------------------

    def meta(self, kind: str, **fields: Any) -> dict[str, Any]:
        return {
            "time": int(time.time()),
            "self_id": self.self_id,
            "post_type": "meta_event",
            "meta_event_type": kind,
            **fields,
        }

    def group_message(
        self,
        message: str | list[dict[str, Any]],
        *,
        group_id: int,
        message_id: int,
        user_id: int = 20001,
        card: str = "",
        nickname: str = "群友",
        role: str = "member",
        at_bot: bool = False,
        time_: int | None = None,
    ) -> dict[str, Any]:
        segments = _segments(message)
        if at_bot:
            segments = [{"type": "at", "data": {"qq": str(self.self_id)}}, *segments]
        return {
            "time": time_ or int(time.time()),
            "self_id": self.self_id,
            "post_type": "message",
            "message_type": "group",
            "sub_type": "normal",
            "message_id": message_id,
            "group_id": group_id,
            "user_id": user_id,
            "anonymous": None,
            "message": segments,
            "message_format": "array",
            "raw_message": _raw(segments),
            "font": 14,
            "sender": {"user_id": user_id, "nickname": nickname, "card": card, "role": role},
        }

    def private_message(
        self,
        message: str | list[dict[str, Any]],
        *,
        user_id: int,
        message_id: int,
        nickname: str = "群友",
        time_: int | None = None,
    ) -> dict[str, Any]:
        segments = _segments(message)
        return {
            "time": time_ or int(time.time()),
            "self_id": self.self_id,
            "post_type": "message",
            "message_type": "private",
            "sub_type": "friend",
            "message_id": message_id,
            "user_id": user_id,
            "message": segments,
            "message_format": "array",
            "raw_message": _raw(segments),
            "font": 14,
            "sender": {"user_id": user_id, "nickname": nickname},
        }


def _segments(message: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "data": {"text": message}}] if isinstance(message, str) else message


def _raw(segments: list[dict[str, Any]]) -> str:
    return "".join(
        s["data"].get("text", "") if s.get("type") == "text" else f"[CQ:{s.get('type')}]"
        for s in segments
        if isinstance(s.get("data"), dict)
    )


# --- reading the bot's database --------------------------------------------------------


def query(database: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if not database.exists():
        return []
    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10)
    try:
        return list(conn.execute(sql, params))
    except sqlite3.OperationalError:
        return []  # tables not created yet
    finally:
        conn.close()


def count_rows(data_dir: Path, table: str, where: str = "1=1") -> int:
    rows = query(data_dir / "yuji.db", f"SELECT count(*) FROM {table} WHERE {where}")
    return int(rows[0][0]) if rows else 0


# --- several bots on one PostgreSQL store ------------------------------------------------


def shared_store_env(database_url: str, attachments: Path) -> dict[str, str]:
    """What every process of one deployment shares (each keeps its own data folder)."""
    return {"YUJI_DATABASE_URL": database_url, "YUJI_ATTACHMENTS_DIR": str(attachments)}


async def pg_query(dsn: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """Rows of a query on the shared PostgreSQL store (`Server.dsn(database)`)."""
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        return [tuple(r) for r in await conn.fetch(sql, *args)]
    finally:
        await conn.close()
