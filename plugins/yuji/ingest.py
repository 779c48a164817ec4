"""Archive every incoming message once, as early as possible, and say when one cannot be.

With `bot.py` (its `IngestAdapter`), `archive_frame` runs on the raw JSON of each
frame before NoneBot parses it: one conversion, one queue put, no matcher, no
dependency solving. Anywhere else (another adapter registration, nonebug tests) an
event preprocessor archives the parsed event instead, once per event, before any
matcher runs (mute does not stop it).

`needs_handlers` is the adapter's fast path: a group message no yuji handler acts on
(no command, no @, no reply, no nickname) skips NoneBot's matchers, unless another
plugin has message matchers of its own, in which case every event goes through.

Nothing here raises: a message that cannot be archived is logged, the same complaint
at most once a minute with a count.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from nonebot import get_driver, logger
from nonebot.adapters import Bot as BaseBot
from nonebot.adapters import Event as BaseEvent
from nonebot.adapters.onebot.v11 import Bot, Event, GroupMessageEvent, MessageEvent
from nonebot.matcher import matchers
from nonebot.message import event_preprocessor

from memory_core import LogThrottle, repeats

from . import runtime
from .archive_convert import message_experience
from .archive_hooks import incoming_experience

log = logger
MESSAGE_POSTS = frozenset({"message", "message_sent"})
REPORT_S = 60.0
PLUGIN = "yuji"

_throttle = LogThrottle(REPORT_S)


async def archive_frame(self_id: str, data: Mapping[str, Any]) -> None:
    """Queue the message in one decoded frame (anything else is left alone)."""
    if data.get("post_type") not in MESSAGE_POSTS:
        return
    try:
        core = runtime.core()
        exp = message_experience(data, self_id=str(self_id), now=core.clock.now)
    except Exception as exc:
        complain(("convert", type(exc).__name__), f"unreadable message skipped ({exc!r})", data)
        return
    if exp is None:
        complain("malformed", "malformed message event skipped (no chat, id or sender)", data)
        return
    try:
        await core.archive.enqueue(exp)
    except Exception as exc:
        complain(
            ("enqueue", type(exc).__name__),
            f"could not archive message {exp.scope}/{exp.fingerprint} ({exc!r})",
            data,
        )


def complain(key: Hashable, what: str, data: Mapping[str, Any] | None = None) -> None:
    held = _throttle.allow(key)
    if held is None:
        return
    log.warning(f"yuji: {what}: {_preview(data)}{repeats(held)}")


@event_preprocessor
async def _archive_parsed(bot: BaseBot, event: BaseEvent) -> None:
    """The fallback when the frames did not come through `IngestAdapter`."""
    if _ingest_adapter(bot) or not isinstance(bot, Bot):
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


def needs_handlers(bot: Bot, event: Event) -> bool:
    """False only for a group message that no handler of this bot can act on."""
    if not isinstance(event, GroupMessageEvent) or _other_message_matchers():
        return True
    config = get_driver().config
    text = event.get_plaintext().lstrip()
    starts = tuple(s for s in config.command_start if s)
    if starts and text.startswith(starts):
        return True
    if event.to_me or event.reply is not None:
        return True
    if any(s.type in ("at", "reply") for s in event.original_message):
        return True
    folded = text.casefold()
    names = (*config.nickname, *_core_nicknames())
    return any(n.strip() and n.strip().casefold() in folded for n in names)


def _core_nicknames() -> tuple[str, ...]:
    try:
        return runtime.core().settings.nicknames
    except RuntimeError:
        return ()


_others: bool | None = None


def _other_message_matchers() -> bool:
    """Whether a plugin other than yuji handles messages (then nothing skips them)."""
    global _others
    if _others is None:
        _others = any(
            m.type in ("message", "") and (m.plugin_id or "").split(":")[0] != PLUGIN
            for priority in matchers.values()
            for m in priority
        )
    return _others


def _ingest_adapter(bot: BaseBot) -> bool:
    from .onebot_adapter import IngestAdapter

    return isinstance(bot.adapter, IngestAdapter)


def _dump(event: Event) -> dict[str, Any]:
    try:
        return event.model_dump()
    except Exception:
        return {}


def _preview(data: Mapping[str, Any] | None) -> str:
    if data is None:
        return ""
    raw = repr(dict(data))
    return raw if len(raw) <= 300 else raw[:300] + "..."
