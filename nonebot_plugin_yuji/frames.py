"""What the ingest adapter (`onebot_adapter.py`) does with each raw frame.

`archive_frame` queues the message in the frame's JSON before NoneBot parses it: one
conversion, one queue put, no matcher, no dependency solving.

`needs_handlers` is the adapter's fast path. yuji's handlers act on commands, on
messages that may wake the persona (private, @, reply, nickname), on the
`bot_offline` notice, on notices that may rename a chat (chat_names.py) and on
heartbeats; any other event (a plain group message, most
notices, requests) skips NoneBot's matchers, which would only find nothing to do
after solving their dependencies and log the whole event. When another plugin has
matchers of its own, every event goes through.

Nothing here raises: a message that cannot be archived is logged, the same complaint
at most once a minute with a count.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable, Mapping
from typing import Any

from nonebot import get_driver, logger
from nonebot.matcher import matchers

from memory_core import SELF_THROTTLED, LogThrottle, NewExperience, Yuji, repeats

from . import runtime
from .archive_convert import message_experience
from .chat_names import names_a_chat
from .departures import leaves_a_group
from .ops_notices import OFFLINE_NOTICE

log = logger.bind(**{SELF_THROTTLED: True})
MESSAGE_POSTS = frozenset({"message", "message_sent"})
MAX_HANDLED_SEGMENTS = 1000
"""A message of more segments is archived but not parsed for handlers (NoneBot builds
a pydantic validator per segment: 20,000 segments hold the event loop for seconds)."""
REPORT_S = 60.0
PLUGIN = __name__.rpartition(".")[0]

_throttle = LogThrottle(REPORT_S)


async def archive_frame(self_id: str, data: Mapping[str, Any]) -> None:
    """Queue the message in one decoded frame (anything else is left alone)."""
    found = _experience(self_id, data)
    if found is None:
        return
    core, exp = found
    try:
        await core.archive.enqueue(exp)
    except Exception as exc:
        complain(
            ("enqueue", type(exc).__name__),
            f"could not archive message {exp.scope}/{exp.fingerprint} ({exc!r})",
            data,
        )


def offer_frame(self_id: str, data: Mapping[str, Any]) -> asyncio.Future[Any] | None:
    """`archive_frame` for a synchronous caller: the future of the message's commit;
    None when there is nothing to wait for (not a message, or unreadable and logged)
    or when the queue is full (then nothing was queued: the caller archives the parsed
    event the waiting way)."""
    found = _experience(self_id, data)
    if found is None:
        return None
    core, exp = found
    try:
        return core.archive.offer(exp)
    except Exception as exc:
        complain(
            ("enqueue", type(exc).__name__),
            f"could not archive message {exp.scope}/{exp.fingerprint} ({exc!r})",
            data,
        )
        return None


def _experience(self_id: str, data: Mapping[str, Any]) -> tuple[Yuji, NewExperience] | None:
    if data.get("post_type") not in MESSAGE_POSTS:
        return None
    try:
        core = runtime.core()
        exp = message_experience(data, self_id=str(self_id), now=core.clock.now)
    except Exception as exc:
        complain(("convert", type(exc).__name__), f"unreadable message skipped ({exc!r})", data)
        return None
    if exp is None:
        complain("malformed", "malformed message event skipped (no chat, id or sender)", data)
        return None
    return core, exp


def complain(key: Hashable, what: str, data: Mapping[str, Any] | None = None) -> None:
    held = _throttle.allow(key)
    if held is None:
        return
    log.warning(f"yuji: {what}: {_preview(data)}{repeats(held)}")


def needs_handlers(data: Mapping[str, Any]) -> bool:
    """False for an event no handler of this bot acts on (see the module docstring),
    decided on the raw JSON, so such an event is never even parsed by NoneBot."""
    if _other_matchers():
        return True
    post = data.get("post_type")
    if post == "notice":
        return (
            data.get("notice_type") == OFFLINE_NOTICE or names_a_chat(data) or leaves_a_group(data)
        )
    if post == "meta_event":
        return data.get("meta_event_type") == "heartbeat"
    if post not in MESSAGE_POSTS or data.get("message_type") not in ("group", "private"):
        return False  # requests, unknown types, message types yuji does not answer
    message = data.get("message")
    if isinstance(message, list) and len(message) > MAX_HANDLED_SEGMENTS:  # pyright: ignore[reportUnknownArgumentType]
        complain(
            "segments", f"message of over {MAX_HANDLED_SEGMENTS} segments archived, not handled"
        )
        return False
    if data.get("message_type") == "private":
        return True
    text = _plain_text(message).lstrip()
    config = get_driver().config
    starts = tuple(s for s in config.command_start if s)
    if (starts and text.startswith(starts)) or _mentions_or_quotes(message):
        return True
    folded = text.casefold()
    names = (*config.nickname, *_core_nicknames())
    return any(n.strip() and n.strip().casefold() in folded for n in names)


def _plain_text(message: Any) -> str:
    if isinstance(message, str):
        return message
    if not isinstance(message, list):
        return ""
    parts: list[str] = []
    for segment in message:  # pyright: ignore[reportUnknownVariableType]
        if isinstance(segment, Mapping) and segment.get("type") == "text":  # pyright: ignore[reportUnknownMemberType]
            data: Any = segment.get("data")  # pyright: ignore[reportUnknownMemberType]
            value = data.get("text") if isinstance(data, Mapping) else None  # pyright: ignore[reportUnknownMemberType]
            if isinstance(value, str):
                parts.append(value)
    return "".join(parts)


def _mentions_or_quotes(message: Any) -> bool:
    if isinstance(message, str):
        return "[CQ:at," in message or "[CQ:reply," in message
    if not isinstance(message, list):
        return False
    return any(
        isinstance(s, Mapping) and s.get("type") in ("at", "reply")  # pyright: ignore[reportUnknownMemberType]
        for s in message  # pyright: ignore[reportUnknownVariableType]
    )


def _core_nicknames() -> tuple[str, ...]:
    core = runtime.started()
    return () if core is None else core.settings.nicknames


_others: bool | None = None


def _other_matchers() -> bool:
    """Whether a plugin other than yuji has matchers (then nothing skips them)."""
    global _others
    if _others is None:
        _others = any(
            (m.plugin_id or "").split(":")[0] != PLUGIN
            for priority in matchers.values()
            for m in priority
        )
    return _others


def _preview(data: Mapping[str, Any] | None) -> str:
    if data is None:
        return ""
    raw = repr(dict(data))
    return raw if len(raw) <= 300 else raw[:300] + "..."
