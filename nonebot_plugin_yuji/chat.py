"""The wake handler: event -> `core.chat.respond(incoming, send)` -> reply parts sent.

Runs after the archive hook (a preprocessor) and the commands (`YUJI_CHAT_PRIORITY`
50 after `YUJI_COMMAND_PRIORITY` 10), blocks other handlers only with
`YUJI_CHAT_BLOCK`, and skips command-looking text. Replies are sent as plain
text segments, so nothing the model writes is ever parsed as a CQ code; in groups
the first part quotes the message it answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from nonebot import get_driver, logger, on_message
from nonebot.adapters import Bot as BaseBot
from nonebot.adapters import Event as BaseEvent
from nonebot.adapters.onebot.v11 import (
    Bot,
    GroupMessageEvent,
    MessageEvent,
    PrivateMessageEvent,
)
from nonebot.adapters.telegram import Bot as TelegramBot
from nonebot.adapters.telegram import event as tg
from nonebot.typing import T_State

from memory_core import Incoming, group_scope, private_scope

from . import runtime, telegram_convert
from .archive_convert import convert, display_name, event_instant
from .config import matcher_settings
from .direct import DirectRule
from .ingest import committed
from .platforms import mentioned_ids, plain


async def may_wake(_bot: BaseBot, event: BaseEvent, _state: T_State) -> bool:
    """A cheap first look (the matcher's rule), QQ or Telegram: private, addressed to
    the bot, a mention or a quote, or a nickname in the text. Plain chatter stops here,
    so it costs the host's other plugins no handler run, dependency solving or log
    lines of yuji's.

    One matcher for both platforms, and every rule of yuji's takes base types and tests
    `isinstance`: with a parameter of another type (a Telegram rule for a QQ message)
    NoneBot skips the matcher by raising, and that exception's traceback keeps the
    event and its handling alive until a full garbage collection; at a few hundred
    messages a second those collections took most of the process's time
    (docs/plugin.md). And async, called directly (`DirectRule`): NoneBot would solve
    its parameters for every event of the bot."""
    core = runtime.started()
    if core is None:
        return False
    if isinstance(event, MessageEvent):
        if event.to_me or event.reply is not None:
            return True
        if any(s.type in ("at", "reply") for s in event.original_message):
            return True
        text = event.original_message.extract_plain_text()
    elif isinstance(event, tg.MessageEvent) and telegram_convert.scope_of(event) is not None:
        if event.is_tome() or event.reply_to_message is not None:
            return True
        text = telegram_convert.plain_text(event)
    else:
        return False
    folded = text.casefold()
    names = (*get_driver().config.nickname, *core.settings.nicknames)
    return any(n.strip() and n.strip().casefold() in folded for n in names)


_MATCHERS = matcher_settings()
chat = on_message(
    rule=DirectRule(may_wake), priority=_MATCHERS.chat_priority, block=_MATCHERS.chat_block
)


@chat.handle()
async def _wake(bot: BaseBot, event: BaseEvent) -> None:
    if isinstance(bot, Bot) and isinstance(event, MessageEvent):
        incoming = to_incoming(event, str(bot.self_id), command_starts())
        quote = str(event.message_id) if isinstance(event, GroupMessageEvent) else None
    elif isinstance(bot, TelegramBot) and isinstance(event, tg.MessageEvent):
        incoming = telegram_incoming(bot, event, command_starts())
        quote = str(event.message_id) if isinstance(event, tg.GroupMessageEvent) else None
    else:
        return
    if incoming is not None:
        await respond(bot, event, incoming, quote)


async def respond(bot: BaseBot, event: BaseEvent, incoming: Incoming, quote: str | None) -> None:
    """The persona's reply parts, sent as plain text; the first quotes `quote`. The
    message is archived first: recall reads the turns before it."""
    await committed(event)
    core = runtime.core()
    sent: list[str] = []

    async def send(text: str) -> str | None:
        result = await bot.send(event, plain(bot, text, None if sent else quote, whole=True))
        message_id = _message_id(result)
        sent.append(str(message_id))
        return None if message_id is None else str(message_id)

    outcome = await core.chat.respond(incoming, send)
    if outcome.kind in ("fallback", "failure"):
        logger.info(f"yuji: {outcome.kind} line sent in {incoming.scope}")


def _message_id(result: Any) -> Any:
    if isinstance(result, Mapping):
        return cast(Mapping[str, Any], result).get("message_id")
    return getattr(result, "message_id", None)


def telegram_incoming(
    bot: TelegramBot, event: tg.MessageEvent, command_starts: tuple[str, ...] = ("/",)
) -> Incoming | None:
    """`to_incoming` for Telegram."""
    self_id = str(bot.self_id)
    scope = telegram_convert.scope_of(event)
    user = telegram_convert.sender_of(event)
    if scope is None or user is None or str(user.id) == self_id:
        return None
    handle = f"@{bot.username}" if bot.username else ""
    mentions = {str(s.data.get("text", "")) for s in event.original_message if s.type == "mention"}
    text = telegram_convert.plain_text(event, drop=(handle,) if handle else ()).strip()
    if command_starts and text.startswith(command_starts):
        return None
    replied = event.reply_to_message
    replied_from = getattr(replied, "from_", None) if replied is not None else None
    return Incoming(
        scope=scope,
        fingerprint=str(event.message_id),
        sender_id=str(user.id),
        sender_name=telegram_convert.user_name(user),
        text=text,
        sent_at=event_instant(event.date) or runtime.core().clock.now(),
        self_id=self_id,
        is_private=isinstance(event, tg.PrivateMessageEvent),
        mentioned_ids=((self_id,) if handle and handle in mentions else ())
        + mentioned_ids(bot, event),
        reply_to=str(replied.message_id) if replied is not None else None,
        reply_to_bot=None if replied_from is None else str(replied_from.id) == self_id,
    )


def command_starts() -> tuple[str, ...]:
    return tuple(s for s in get_driver().config.command_start if s)


def to_incoming(
    event: MessageEvent, self_id: str, command_starts: tuple[str, ...] = ("/",)
) -> Incoming | None:
    """What the wake rules and the prompt need from the event; None = not for chat."""
    if str(event.user_id) == self_id:
        return None
    if isinstance(event, GroupMessageEvent):
        scope, is_private = group_scope(event.group_id), False
    elif isinstance(event, PrivateMessageEvent):
        scope, is_private = private_scope(event.user_id), True
    else:
        return None
    segments = list(event.original_message)
    mentioned = tuple(str(s.data.get("qq", "")) for s in segments if s.type == "at")
    spoken = [s for s in segments if not (s.type == "at" and str(s.data.get("qq")) == self_id)]
    converted = convert(spoken)
    text = converted.text.strip()
    if command_starts and text.startswith(command_starts):
        return None
    reply_to_bot: bool | None = None
    if event.reply is not None and event.reply.sender.user_id is not None:
        reply_to_bot = str(event.reply.sender.user_id) == self_id
    return Incoming(
        scope=scope,
        fingerprint=str(event.message_id),
        sender_id=str(event.user_id),
        sender_name=display_name(getattr(event.sender, "card", None), event.sender.nickname),
        text=text,
        sent_at=event_instant(event.time) or runtime.core().clock.now(),
        self_id=self_id,
        is_private=is_private,
        mentioned_ids=mentioned,
        reply_to=converted.reply_to,
        reply_to_bot=reply_to_bot,
    )
