"""Archive every incoming message once, as early as possible, wherever it comes from.

With `bot.py` (its `IngestAdapter`), each message is archived from the raw frame
before NoneBot parses it (`frames.py`). Anywhere else (another adapter registration,
nonebug tests) the event preprocessor here archives the parsed event instead, once
per event, before any matcher runs (mute does not stop it).
"""

from __future__ import annotations

from typing import Any

from nonebot.adapters import Bot as BaseBot
from nonebot.adapters import Event as BaseEvent
from nonebot.adapters.onebot.v11 import Bot, Event, MessageEvent
from nonebot.message import event_preprocessor

from . import runtime
from .archive_hooks import incoming_experience
from .frames import MESSAGE_POSTS, complain
from .onebot_adapter import IngestAdapter


@event_preprocessor
async def _archive_parsed(bot: BaseBot, event: BaseEvent) -> None:
    """The fallback when the frames did not come through `IngestAdapter`."""
    if isinstance(bot.adapter, IngestAdapter) or not isinstance(bot, Bot):
        return
    if not isinstance(event, MessageEvent):
        if isinstance(event, Event) and event.post_type in MESSAGE_POSTS:
            complain("malformed", "malformed message event skipped", _dump(event))
        return
    try:
        core = runtime.core()
        exp = incoming_experience(bot, event, now=core.clock.now())
        if exp is not None:
            await core.archive.append(exp)
    except Exception as exc:
        complain(
            ("append", type(exc).__name__),
            f"could not archive message {getattr(event, 'message_id', '?')} ({exc!r})",
        )


def _dump(event: Event) -> dict[str, Any]:
    try:
        return event.model_dump()
    except Exception:
        return {}
