"""Archive every message the bot sees, and every message it sends.

- Incoming: a priority-0, non-blocking message matcher, so the message is archived
  before any other handler runs (mute does not stop it).
- Outgoing: `Bot.on_called_api` for `send_group_msg` / `send_private_msg` /
  `send_msg`, archived with `is_bot=True`; the fingerprint is the returned
  `message_id`, so the echo of our own message (if the client reports one) dedups.

Conversion is in `archive_convert` (pure); this module only reads the event and
makes one core call. Nothing here raises into NoneBot: a bad message is logged and
skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from nonebot import logger, on_message
from nonebot.adapters import Bot as BaseBot
from nonebot.adapters.onebot.v11 import Bot, Event, MessageEvent

from memory_core import NewExperience, group_scope, private_scope

from . import runtime
from .archive_convert import convert, display_name, event_instant, raw_segments

SEND_APIS = frozenset({"send_group_msg", "send_private_msg", "send_msg"})

archive_incoming = on_message(priority=0, block=False)


@archive_incoming.handle()
async def _archive_incoming(bot: Bot, event: Event) -> None:
    if not isinstance(event, MessageEvent):
        # The adapter could not parse it as any message event (it logs that only at
        # DEBUG): say so once, plainly, and skip it.
        logger.warning(f"yuji: malformed message event skipped: {_preview(event)}")
        return
    try:
        core = runtime.core()
        exp = incoming_experience(bot, event, now=core.clock.now())
        if exp is None:
            return
        await core.archive.append(exp)
    except Exception as exc:
        logger.opt(exception=exc).error(
            f"yuji: could not archive message {getattr(event, 'message_id', '?')}"
        )


@BaseBot.on_called_api
async def _archive_own_send(
    bot: BaseBot, exception: Exception | None, api: str, data: dict[str, Any], result: Any
) -> None:
    if exception is not None or api not in SEND_APIS or not isinstance(bot, Bot):
        return
    try:
        core = runtime.core()
        exp = outgoing_experience(
            bot.self_id, api, data, result, now=core.clock.now(), bot_name=core.settings.bot_name
        )
        if exp is None:
            logger.warning(f"yuji: own {api} not archived (no message_id in the result)")
            return
        await core.archive.append(exp)
    except Exception as exc:
        logger.opt(exception=exc).error(f"yuji: could not archive our own {api}")


def incoming_experience(bot: Bot, event: MessageEvent, *, now: datetime) -> NewExperience | None:
    group_id = getattr(event, "group_id", None)
    if event.message_type == "group" and group_id is not None:
        scope = group_scope(group_id)
    elif event.message_type == "private":
        scope = private_scope(event.user_id)
    else:
        return None
    converted = convert(event.original_message)
    return NewExperience(
        scope=scope,
        fingerprint=str(event.message_id),
        sender_id=str(event.user_id),
        sender_name=display_name(event.sender.card, event.sender.nickname),
        is_bot=str(event.user_id) == str(bot.self_id),
        text=converted.text,
        segments=converted.segments,
        reply_to=converted.reply_to,
        sent_at=event_instant(event.time) or now,
        attachments=converted.attachments,
    )


def outgoing_experience(
    self_id: str,
    api: str,
    data: Mapping[str, Any],
    result: Any,
    *,
    now: datetime,
    bot_name: str = "",
) -> NewExperience | None:
    message_id = result.get("message_id") if isinstance(result, Mapping) else None
    if message_id is None or message_id == "":
        return None
    kind = {"send_group_msg": "group", "send_private_msg": "private"}.get(
        api, data.get("message_type") or ("group" if data.get("group_id") else "private")
    )
    target = data.get("group_id") if kind == "group" else data.get("user_id")
    if target is None:
        return None
    converted = convert(raw_segments(data.get("message"), escaped=bool(data.get("auto_escape"))))
    return NewExperience(
        scope=group_scope(target) if kind == "group" else private_scope(target),
        fingerprint=str(message_id),
        sender_id=str(self_id),
        sender_name=bot_name,
        is_bot=True,
        text=converted.text,
        segments=converted.segments,
        reply_to=converted.reply_to,
        sent_at=now,
        attachments=converted.attachments,
    )


def _preview(event: Event) -> str:
    try:
        raw = repr(event.model_dump())
    except Exception:
        raw = repr(event)
    return raw if len(raw) <= 300 else raw[:300] + "..."
