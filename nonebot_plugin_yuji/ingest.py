"""Archive every incoming message once, as early as possible, wherever it comes from.

- `bot.py`'s `IngestAdapter`: each message is archived from the raw frame before
  NoneBot parses it (`frames.py`).
- The stock OneBot v11 adapter (someone else's bot): at start-up `hook_stock_adapters`
  gives the registered adapter's instance its own `json_to_event` (an instance
  attribute: the class and every other adapter stay as they were), which queues each
  message frame without waiting while the receive loop reads it, before NoneBot starts
  the event's handler task. The event then goes through the bot's matchers at once:
  nothing in the host's handling waits for yuji's commit, and the writer commits the
  queue in batches meanwhile. Only yuji's own handlers that read the archive around
  their message wait for that one commit (`committed`). Nothing is lost by not waiting:
  the queue is bounded (a frame the full queue cannot take is archived the waiting way
  by the preprocessor below), a graceful stop drains it, and after a crash the next
  start's backfill fetches the chats' gaps, as with the ingest adapter.
- Anything else (another adapter, nonebug tests, `YUJI_ARCHIVE_ON_RECEIVE=false`): the
  event preprocessor here archives the parsed event, once per event, before any
  matcher runs (mute does not stop it).

Why not archive in the preprocessor for the stock adapter too: a preprocessor runs
inside the event's handler task, so waiting for the commit there holds every event of
a burst in NoneBot at once (docs/plugin.md has the measurements).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import Annotated, Any, cast

from nonebot import get_adapters
from nonebot.adapters import Bot as BaseBot
from nonebot.adapters import Event as BaseEvent
from nonebot.adapters.onebot.v11 import Adapter as OneBotV11Adapter
from nonebot.adapters.onebot.v11 import Bot, Event, MessageEvent
from nonebot.adapters.telegram import event as tg
from nonebot.message import event_preprocessor
from nonebot.params import Depends

from memory_core import NewExperience

from . import runtime, telegram_convert
from .archive_hooks import incoming_experience
from .chat_names import name_telegram_chat
from .direct import direct_preprocessor
from .frames import MESSAGE_POSTS, complain, offer_frame
from .onebot_adapter import IngestAdapter

_commits: dict[int, asyncio.Future[Any]] = {}
"""`id()` of each event whose frame the receive hook queued -> its commit, until it
settles (an id is a live event's: the hook sets or clears it for each parsed event)."""
_queued: set[int] = set()
"""`id()` of each event whose frame the receive hook queued, until the preprocessor
sees it (any other message event, a frame the full queue refused among them, the
preprocessor archives the waiting way)."""
_hooked: set[int] = set()
"""`id()` of the adapter instances that archive on receive (hooked once)."""


def hook_stock_adapters() -> int:
    """Archive on receive in every registered stock OneBot v11 adapter; how many."""
    hooked = 0
    for adapter in get_adapters().values():
        if isinstance(adapter, OneBotV11Adapter) and not isinstance(adapter, IngestAdapter):
            if id(adapter) not in _hooked:  # a second start-up in the same process
                adapter.json_to_event = _archiving(adapter.json_to_event)  # pyright: ignore[reportAttributeAccessIssue]
                _hooked.add(id(adapter))
            hooked += 1
    return hooked


def _archiving(parse: Callable[[Any], Event | None]) -> Callable[[Any], Event | None]:
    def json_to_event(json_data: Any) -> Event | None:
        event = parse(json_data)
        if event is None:
            return event
        key = id(event)
        _commits.pop(key, None)  # entries of an event gone from memory, if any
        _queued.discard(key)
        if runtime.started() is None or not isinstance(json_data, dict):
            return event
        data = cast(dict[str, Any], json_data)
        if data.get("post_type") not in MESSAGE_POSTS:
            return event
        commit = offer_frame(str(data.get("self_id", "")), data)
        if commit is None:
            return event  # queue full (or unreadable, and logged): the preprocessor's
        _queued.add(key)
        if not commit.done():
            _commits[key] = commit
            commit.add_done_callback(lambda done: _settled(key, done))
        return event

    return json_to_event


def _settled(key: int, commit: asyncio.Future[Any]) -> None:
    if _commits.get(key) is commit:
        del _commits[key]


async def committed(event: BaseEvent) -> None:
    """Return once `event`'s message is in the archive (at once when it was archived
    before its matchers ran): for yuji's handlers that read the archive around it. The
    writer stops gathering for it (`YUJI_ARCHIVE_FLUSH_WAIT_S`)."""
    commit = _commits.get(id(event))
    if commit is not None:
        core = runtime.started()
        if core is not None:
            core.archive.hurry()  # received rows gather before a commit; this one is awaited
        with contextlib.suppress(Exception):  # a refused row is logged by the writer
            await asyncio.shield(commit)


_slots: asyncio.Semaphore | None = None
_bounding = False


def bound_handlers(slots: int) -> None:
    """At most `slots` events in NoneBot's matchers at once (0: no bound, and no
    preprocessor for it: a dependency costs every event its solving)."""
    global _slots, _bounding
    if slots > 0 and not _bounding:
        event_preprocessor(_bounded)
        _bounding = True
    _slots = asyncio.Semaphore(slots) if slots > 0 else None


async def _handler_slot() -> AsyncIterator[None]:
    """Held for the whole of the event's handling (NoneBot closes a generator
    dependency when the event's scope ends, whatever its matchers did)."""
    slots = _slots
    if slots is None:
        yield
        return
    async with slots:
        yield


async def _bounded(_slot: Annotated[None, Depends(_handler_slot)]) -> None:
    """The slot is held until the event's handling ends."""


@direct_preprocessor
async def _archive_parsed(bot: BaseBot, event: BaseEvent) -> None:
    """Before any matcher: archive the parsed event, unless the receive hook queued
    its frame already (then nothing waits here: see the module docstring)."""
    if runtime.started() is None:
        return  # not started, or inactive after a failed start
    if id(event) in _queued:
        _queued.discard(id(event))
        return
    if isinstance(event, tg.Event):
        if isinstance(event, tg.MessageEvent):
            await _archive(
                lambda now: telegram_convert.experience(event, self_id=str(bot.self_id), now=now),
                event.message_id,
            )
        await name_telegram_chat(event)
        return
    if isinstance(bot.adapter, IngestAdapter) or not isinstance(bot, Bot):
        return
    if not isinstance(event, MessageEvent):
        if isinstance(event, Event) and event.post_type in MESSAGE_POSTS:
            complain("malformed", "malformed message event skipped", _dump(event))
        return
    await _archive(lambda now: incoming_experience(bot, event, now=now()), event.message_id)


async def _archive(
    read: Callable[[Callable[[], datetime]], NewExperience | None], message_id: object
) -> None:
    try:
        core = runtime.core()
        exp = read(core.clock.now)
        if exp is not None:
            await core.archive.append(exp)
    except Exception as exc:
        complain(
            ("append", type(exc).__name__), f"could not archive message {message_id} ({exc!r})"
        )


def _dump(event: Event) -> dict[str, Any]:
    try:
        return event.model_dump()
    except Exception:
        return {}
