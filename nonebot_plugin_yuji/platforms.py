"""Who and where, whatever the adapter: the one place the plugin asks which platform
an event came from (docs/plugin.md).

OneBot v11 (QQ through NapCat, Lagrange, LLOneBot) and Telegram
(nonebot-adapter-telegram) are read here from their own event fields, with no call to
the client: archiving a message must never wait for an API answer. Every other adapter
is "not a chat yuji knows": its messages are neither archived nor answered, and a
command there says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from nonebot import logger
from nonebot.adapters import Bot, Event, Message, MessageSegment
from nonebot.adapters.onebot import v11
from nonebot.adapters.telegram import Bot as TelegramBot
from nonebot.adapters.telegram import event as tg
from nonebot.adapters.telegram.message import Entity
from nonebot.adapters.telegram.message import Message as TelegramMessage
from nonebot.adapters.telegram.message import MessageSegment as TelegramSegment
from nonebot.adapters.telegram.message import Reply as TelegramReply
from nonebot.permission import SUPERUSER

from memory_core import NewExperience, UsageError, group_scope, private_scope

from . import telegram_convert
from .archive_convert import convert
from .archive_hooks import incoming_experience

NOT_A_CHAT = "这里用不了这个命令。"
ADMIN_ROLES = frozenset({"owner", "admin"})
TELEGRAM_ADMINS = frozenset({"creator", "administrator"})


def chat_scope(event: Event) -> str | None:
    """The scope of a message event of a platform yuji knows, else None."""
    if isinstance(event, v11.GroupMessageEvent):
        return group_scope(event.group_id)
    if isinstance(event, v11.PrivateMessageEvent):
        return private_scope(event.user_id)
    if isinstance(event, tg.MessageEvent):
        return telegram_convert.scope_of(event)
    return None


def scope_of(event: Event) -> str:
    scope = chat_scope(event)
    if scope is None:
        raise UsageError(NOT_A_CHAT)
    return scope


def is_group(event: Event) -> bool:
    return isinstance(event, v11.GroupMessageEvent | tg.GroupMessageEvent)


def experience_of(bot: Bot, event: Event, *, now: datetime) -> NewExperience | None:
    """The message event as the archive keeps it (None: not a message of a chat)."""
    if isinstance(bot, v11.Bot) and isinstance(event, v11.MessageEvent):
        return incoming_experience(bot, event, now=now)
    if isinstance(event, tg.MessageEvent):
        return telegram_convert.experience(event, self_id=str(bot.self_id), now=lambda: now)
    return None


def mentioned_ids(bot: Bot, event: Event) -> tuple[str, ...]:
    """The ids a message @-mentions, the bot's own and @all left out: QQ's `at`
    segments, Telegram's `text_mention` entities (a member without a username, named
    with their user). A Telegram @username is text, and read as a name: the index keeps
    no usernames to find whose it is."""
    if isinstance(event, v11.MessageEvent):
        found = (str(s.data.get("qq", "")) for s in event.original_message if s.type == "at")
    elif isinstance(event, tg.MessageEvent):
        found = (
            str(getattr(s.data.get("user"), "id", ""))
            for s in event.original_message
            if s.type == "text_mention"
        )
    else:
        return ()
    ours = {str(bot.self_id), "all"}
    return tuple(dict.fromkeys(q for q in found if q and q not in ours))


def quoted_id(event: Event) -> str | None:
    """The id of the message this one replies to."""
    if isinstance(event, v11.MessageEvent):
        return convert(event.original_message).reply_to
    if isinstance(event, tg.MessageEvent) and event.reply_to_message is not None:
        return str(event.reply_to_message.message_id)
    return None


async def is_superuser(bot: Bot, event: Event) -> bool:
    return await SUPERUSER(bot, event)


async def is_chat_admin(bot: Bot, event: Event) -> bool:
    """The sender administers this group (QQ owner/admin, Telegram creator/administrator)."""
    if isinstance(bot, v11.Bot) and isinstance(event, v11.GroupMessageEvent):
        return await _qq_role(bot, event) in ADMIN_ROLES
    if isinstance(bot, TelegramBot) and isinstance(event, tg.GroupMessageEvent):
        try:
            member: Any = await bot.get_chat_member(chat_id=event.chat.id, user_id=event.from_.id)
        except Exception as exc:
            logger.warning(f"yuji: getChatMember failed: {exc!r}")
            return False
        return getattr(member, "status", None) in TELEGRAM_ADMINS
    return False


async def _qq_role(bot: v11.Bot, event: v11.GroupMessageEvent) -> str | None:
    """The sender's role from the event, else asked of the client (some omit it)."""
    if event.sender.role:
        return event.sender.role
    try:
        info: Any = await bot.get_group_member_info(
            group_id=event.group_id, user_id=event.user_id, no_cache=True
        )
    except Exception as exc:
        logger.warning(f"yuji: get_group_member_info failed: {exc!r}")
        return None
    role = info.get("role") if isinstance(info, Mapping) else None
    return role if isinstance(role, str) else None


def plain(
    bot: Bot, text: str, quote: str | None = None, *, whole: bool = False
) -> Message[Any] | MessageSegment[Any] | str:
    """`text` as the adapter sends it verbatim (never parsed as a CQ code or markup),
    quoting message `quote` when given (`whole`: a Message even without a quote)."""
    if isinstance(bot, v11.Bot):
        if not quote and not whole:
            return v11.MessageSegment.text(text)
        message = v11.Message(v11.MessageSegment.text(text))
        return v11.MessageSegment.reply(int(quote)) + message if quote else message
    if isinstance(bot, TelegramBot):
        segments: list[TelegramSegment] = [Entity.text(text)]
        if quote:
            segments.insert(0, TelegramReply.reply(int(quote)))
        return TelegramMessage(segments)
    return text
