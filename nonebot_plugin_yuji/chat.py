"""The wake handler: event -> `core.chat.respond(incoming, send)` -> reply parts sent.

Runs after the archive hook (a preprocessor) and the commands (`YUJI_CHAT_PRIORITY`
50 after `YUJI_COMMAND_PRIORITY` 10), blocks other handlers only with
`YUJI_CHAT_BLOCK`, and skips command-looking text. Replies are sent as plain
text segments, so nothing the model writes is ever parsed as a CQ code; in groups
the first part quotes the message it answers.
"""

from __future__ import annotations

from collections.abc import Mapping

from nonebot import get_driver, logger, on_message
from nonebot.adapters.onebot.v11 import (
    Bot,
    GroupMessageEvent,
    Message,
    MessageEvent,
    MessageSegment,
    PrivateMessageEvent,
)
from nonebot.rule import Rule

from memory_core import Incoming, group_scope, private_scope

from . import runtime
from .archive_convert import convert, display_name, event_instant
from .config import matcher_settings


def may_wake(event: MessageEvent) -> bool:
    """A cheap first look (a matcher rule): private, addressed to the bot, a mention or a
    quote, or a nickname in the text. Plain chatter stops here, so it costs the host's
    other plugins no handler run, dependency solving or log lines of yuji's."""
    core = runtime.started()
    if core is None:
        return False
    if event.to_me or event.reply is not None:
        return True
    if any(s.type in ("at", "reply") for s in event.original_message):
        return True
    text = event.original_message.extract_plain_text().casefold()
    names = (*get_driver().config.nickname, *core.settings.nicknames)
    return any(n.strip() and n.strip().casefold() in text for n in names)


_MATCHERS = matcher_settings()
chat = on_message(rule=Rule(may_wake), priority=_MATCHERS.chat_priority, block=_MATCHERS.chat_block)


@chat.handle()
async def _wake(bot: Bot, event: MessageEvent) -> None:
    incoming = to_incoming(event, str(bot.self_id), command_starts())
    if incoming is None:
        return
    core = runtime.core()
    quote = str(event.message_id) if isinstance(event, GroupMessageEvent) else None
    sent: list[str] = []

    async def send(text: str) -> str | None:
        message = Message(MessageSegment.text(text))
        if quote is not None and not sent:
            message = MessageSegment.reply(int(quote)) + message
        result = await bot.send(event, message)
        message_id = result.get("message_id") if isinstance(result, Mapping) else None
        sent.append(str(message_id))
        return None if message_id is None else str(message_id)

    outcome = await core.chat.respond(incoming, send)
    if outcome.kind in ("fallback", "failure"):
        logger.info(f"yuji: {outcome.kind} line sent in {incoming.scope}")


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
