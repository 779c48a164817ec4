"""The OneBot v11 adapter with yuji's receive loop (`bot.py` registers it).

The stock adapter reads a reverse-WebSocket frame, `json.loads` it, builds a pydantic
event and starts one unbounded task per event through every matcher. Under a flood
that is where the time and the memory go, and one non-JSON frame closes the socket.
This subclass keeps everything else (API calls, HTTP, forward WebSocket, the event
models) and replaces only that loop:

1. a frame that is not a JSON object is logged (throttled) and skipped; the socket
   stays open;
2. a message is archived from the raw JSON (`frames.archive_frame`) before NoneBot
   parses it, so an event NoneBot cannot parse is still kept; when the archive queue
   is full, this waits, and so the client's socket is not read (backpressure);
3. an event is parsed and handed to NoneBot's matchers only when a handler may act
   on it (`frames.needs_handlers`, decided on the JSON), in at most
   `MAX_HANDLER_TASKS` concurrent tasks; above that, the event is archived but not
   handled, and a line a minute says how many.

API answers (frames without `post_type`) go to the adapter's result store as before;
an event shape NoneBot cannot parse is logged throttled and without its (possibly
huge) raw text, where the stock adapter logs the whole frame every time.

For a graceful stop (`shutdown.py`), `quiesce` refuses new connections and waits
until every open socket has been read empty, so what a client sent before the
signal is archived, not cut off in a socket buffer when the server closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any, cast

from nonebot.adapters.onebot.v11 import Adapter as OneBotV11Adapter
from nonebot.adapters.onebot.v11 import Bot, Event, MessageEvent
from nonebot.compat import type_validate_python
from nonebot.drivers import WebSocket
from nonebot.exception import WebSocketClosed
from nonebot.utils import escape_tag

from memory_core import LogThrottle, repeats

from . import frames

MAX_HANDLER_TASKS = 256
"""Events in NoneBot's matchers at once; beyond that they are archived, not handled."""
REPORT_S = 60.0
QUIET_S = 0.3
"""A socket counts as read empty after this long with no frame and none in hand."""


class IngestAdapter(OneBotV11Adapter):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._handler_tasks: set[asyncio.Task[None]] = set()
        self._throttle = LogThrottle(REPORT_S)
        self.unhandled = 0
        """Events archived but not handed to matchers because too many were running."""
        self.closing = False
        self._in_hand = 0
        self._last_frame = time.monotonic()

    async def _handle_ws(self, websocket: WebSocket) -> None:
        self_id = websocket.request.headers.get("x-self-id")
        if not self_id:
            frames.log.warning("OneBot connection without X-Self-ID refused")
            await websocket.close(1008, "Missing X-Self-ID Header")
            return
        if self_id in self.bots:
            frames.log.warning(f"there is already a bot {self_id}: second connection refused")
            await websocket.close(1008, "Duplicate X-Self-ID")
            return
        response = self._check_access_token(websocket.request)
        if response is not None:
            await websocket.close(1008, cast(str, response.content))
            return
        if self.closing:
            await websocket.close(1012, "Shutting down")
            return

        await websocket.accept()
        bot = Bot(self, self_id)
        self.bot_connect(bot)
        self.connections[self_id] = websocket
        frames.log.info(f"Bot {escape_tag(self_id)} connected")
        try:
            while True:
                frame = await websocket.receive()
                self._in_hand += 1
                try:
                    await self.receive_frame(bot, frame)
                finally:
                    self._in_hand -= 1
                    self._last_frame = time.monotonic()
        except WebSocketClosed:
            frames.log.warning(f"WebSocket for bot {escape_tag(self_id)} closed")
        except Exception as exc:
            frames.log.opt(exception=exc).error(
                f"WebSocket for bot {escape_tag(self_id)} failed; the client will reconnect"
            )
        finally:
            with contextlib.suppress(Exception):
                await websocket.close()
            self.connections.pop(self_id, None)
            self.bot_disconnect(bot)

    async def receive_frame(self, bot: Bot, frame: str | bytes) -> None:
        """One frame from the client: archive, then maybe handle. Never raises."""
        try:
            data: Any = json.loads(frame)
        except (ValueError, RecursionError) as exc:
            self._skip("not JSON", f"{type(exc).__name__}: {exc}", frame)
            return
        if not isinstance(data, dict):
            self._skip("not a JSON object", type(data).__name__, frame)
            return
        payload = cast(dict[str, Any], data)
        await frames.archive_frame(bot.self_id, payload)
        try:
            if "post_type" in payload and not frames.needs_handlers(payload):
                return
            event = self.json_to_event(payload)
            if event is None or (
                payload.get("post_type") in frames.MESSAGE_POSTS
                and not isinstance(event, MessageEvent)
            ):
                return  # a message NoneBot could only read as a bare event: no handler acts
        except Exception as exc:
            self._skip("unreadable", f"{type(exc).__name__}: {exc}", frame)
            return
        if len(self._handler_tasks) >= MAX_HANDLER_TASKS:
            self.unhandled += 1
            held = self._throttle.allow("busy")
            if held is not None:
                frames.log.warning(
                    f"{MAX_HANDLER_TASKS} events already in handlers: this one is archived "
                    f"but not handled; {self.unhandled} so far{repeats(held)}"
                )
            return
        task = asyncio.create_task(self._handle(bot, event))
        self._handler_tasks.add(task)
        task.add_done_callback(self._handler_tasks.discard)

    async def quiesce(self, timeout_s: float) -> bool:
        """Refuse new connections; wait until the open ones are read empty (True) or
        `timeout_s` passes (False)."""
        self.closing = True
        deadline = time.monotonic() + timeout_s
        while self.connections and (self._in_hand or time.monotonic() - self._last_frame < QUIET_S):
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.05)
        return True

    @classmethod
    def json_to_event(cls, json_data: Any) -> Event | None:
        """The stock parser, minus its unthrottled logging of whole raw frames."""
        if not isinstance(json_data, dict):
            return None
        data = cast(dict[str, Any], json_data)
        if "post_type" not in data:
            cls._result_store.add_result(data)
            return None
        for model in cls.get_event_model(data):
            try:
                return type_validate_python(model, data)
            except Exception:
                continue
        try:
            return type_validate_python(Event, data)
        except Exception as exc:
            frames.complain(
                ("event", type(exc).__name__),
                f"event NoneBot cannot parse skipped ({type(exc).__name__})",
            )
            return None

    async def _handle(self, bot: Bot, event: Event) -> None:
        await bot.handle_event(event)

    def _skip(self, what: str, detail: str, frame: str | bytes) -> None:
        held = self._throttle.allow(("skip", what))
        if held is not None:
            preview = frame[:200] if isinstance(frame, str) else repr(frame[:200])
            frames.log.warning(
                f"frame skipped ({what}: {escape_tag(detail[:200])}): "
                f"{escape_tag(preview)}{repeats(held)}"
            )
