"""Archive every message the bot sends, and convert the ones it receives.

- Incoming: each message is archived once, before any matcher: from the raw frame
  with `bot.py`'s adapter (`frames.py`), else from the parsed event (`ingest.py`);
  `incoming_experience` is the converter for a parsed event (also used by
  `/remember`).
- Outgoing: `Bot.on_called_api` for `send_group_msg` / `send_private_msg` /
  `send_msg`, archived with `is_bot=True`; the fingerprint is the returned
  `message_id`, so the echo of our own message (if the client reports one) dedups.
  On Telegram, `send_message` / `send_photo` / `send_sticker`, read from the Bot API's
  raw answer (the hook runs before the adapter makes its model).

Conversion is in `archive_convert` (pure); this module only reads the event and
makes one core call. Nothing here raises into NoneBot: a bad message is logged and
skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from nonebot import logger
from nonebot.adapters import Bot as BaseBot
from nonebot.adapters.onebot.v11 import Bot, MessageEvent
from nonebot.adapters.telegram import Bot as TelegramBot

from memory_core import NewExperience, group_scope, private_scope

from . import runtime
from .archive_convert import convert, message_experience, raw_segments
from .telegram_convert import sent_experience

SEND_APIS = frozenset({"send_group_msg", "send_private_msg", "send_msg"})
TELEGRAM_SEND_APIS = frozenset({"send_message", "send_photo", "send_sticker"})


@BaseBot.on_called_api
async def _archive_own_send(
    bot: BaseBot, exception: Exception | None, api: str, data: dict[str, Any], result: Any
) -> None:
    if exception is not None or runtime.started() is None:
        return
    if isinstance(bot, TelegramBot) and api in TELEGRAM_SEND_APIS:
        await _archive_telegram_send(bot, api, result)
        return
    if api not in SEND_APIS or not isinstance(bot, Bot):
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


async def _archive_telegram_send(bot: TelegramBot, api: str, result: Any) -> None:
    try:
        core = runtime.core()
        exp = sent_experience(
            str(bot.self_id), result, now=core.clock.now(), bot_name=core.settings.bot_name
        )
        if exp is None:
            logger.warning(f"yuji: own Telegram {api} not archived (no chat or message_id)")
            return
        await core.archive.append(exp)
    except Exception as exc:
        logger.opt(exception=exc).error(f"yuji: could not archive our own Telegram {api}")


def incoming_experience(bot: Bot, event: MessageEvent, *, now: datetime) -> NewExperience | None:
    """A parsed message event -> experience, through the same converter as raw frames."""
    return message_experience(
        {
            "message_type": event.message_type,
            "group_id": getattr(event, "group_id", None),
            "user_id": event.user_id,
            "message_id": event.message_id,
            "time": event.time,
            "sender": {"card": event.sender.card, "nickname": event.sender.nickname},
            "message": list(event.original_message),
        },
        self_id=str(bot.self_id),
        now=lambda: now,
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
        account=str(self_id),
    )
