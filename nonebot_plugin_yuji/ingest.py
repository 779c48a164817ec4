"""Archive every incoming message once, as early as possible, wherever it comes from.

- `bot.py`'s `IngestAdapter`: each message is archived from the raw frame before
  NoneBot parses it (`frames.py`).
- The stock OneBot v11 adapter (someone else's bot): at start-up `hook_stock_adapters`
  gives the registered adapter's instance its own `json_to_event` (an instance
  attribute: the class and every other adapter stay as they were), which queues each
  message frame without waiting while the receive loop reads it, before NoneBot starts
  the event's handler task. Why: NoneBot runs each event through every plugin's
  matchers in a task of its own, and a preprocessor runs inside that task, so a burst
  archived there goes only as fast as all the bot's matchers (76 msg/s measured in a
  project with one other plugin; docs/plugin.md has the figures). A frame the full
  queue cannot take is left to the preprocessor, which waits for room.
- Anything else (another adapter, nonebug tests, `YUJI_ARCHIVE_ON_RECEIVE=false`): the
  event preprocessor here archives the parsed event, once per event, before any
  matcher runs (mute does not stop it).
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
from .frames import MESSAGE_POSTS, complain, offer_frame
from .onebot_adapter import IngestAdapter

_queued: dict[int, asyncio.Future[Any]] = {}
"""`id()` of each event whose frame the receive hook queued -> its commit."""


def hook_stock_adapters() -> int:
    """Archive on receive in every registered stock OneBot v11 adapter; how many."""
    hooked = 0
    for adapter in get_adapters().values():
        if isinstance(adapter, OneBotV11Adapter) and not isinstance(adapter, IngestAdapter):
            adapter.json_to_event = _archiving(adapter.json_to_event)  # pyright: ignore[reportAttributeAccessIssue]
            hooked += 1
    return hooked


def _archiving(parse: Callable[[Any], Event | None]) -> Callable[[Any], Event | None]:
    def json_to_event(json_data: Any) -> Event | None:
        event = parse(json_data)
        if event is None or runtime.started() is None or not isinstance(json_data, dict):
            return event
        data = cast(dict[str, Any], json_data)
        if data.get("post_type") in MESSAGE_POSTS:
            committed = offer_frame(str(data.get("self_id", "")), data)
            if committed is not None:
                _queued[id(event)] = committed
        return event

    return json_to_event


_slots: asyncio.Semaphore | None = None


def bound_handlers(slots: int) -> None:
    """At most `slots` events in NoneBot's matchers at once (0: no bound)."""
    global _slots
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


@event_preprocessor
async def _archive_parsed(
    bot: BaseBot, event: BaseEvent, _slot: Annotated[None, Depends(_handler_slot)]
) -> None:
    """Before any matcher: wait for the commit of a frame queued on receive, else
    archive the parsed event. Under a burst the stock adapter starts a task per event
    at once, and every await of the archive writer waits a full round of the ready
    ones; asleep here (for a slot, then for the commit) they are not in that round."""
    if runtime.started() is None:
        return  # not started, or inactive after a failed start
    committed = _queued.pop(id(event), None)
    if committed is not None:
        with contextlib.suppress(Exception):  # a refused row is logged by the writer
            await asyncio.shield(committed)
        return
    if isinstance(event, tg.MessageEvent):
        await _archive(
            lambda now: telegram_convert.experience(event, self_id=str(bot.self_id), now=now),
            event.message_id,
        )
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
