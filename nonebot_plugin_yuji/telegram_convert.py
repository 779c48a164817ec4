"""Telegram messages -> what the archive stores (nonebot-adapter-telegram's events).

Chats are scopes of their own (`telegram-group:<chat id>`, `telegram-private:<chat
id>`, ids as Telegram gives them, negative for groups), so a Telegram chat never meets a
QQ chat of the same digits. The adapter's segments are mapped onto the archive's
shapes (`archive_convert.convert` renders them): text entities become text (the
entity kind kept), a photo an image segment with its `file_id` (recorded, not
downloaded: the file's URL carries the bot token), a sticker a sticker, the message
replied to a `reply` segment. Pure functions: no bot, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from nonebot.adapters.telegram.event import GroupMessageEvent, MessageEvent, PrivateMessageEvent
from nonebot.adapters.telegram.model import User

from memory_core import NewExperience, group_scope, private_scope

from .archive_convert import clean_text, convert, event_instant

PLATFORM = "telegram"
_FILES = {
    "photo": "image",
    "sticker": "image",
    "animation": "image",
    "voice": "record",
    "audio": "record",
    "video": "video",
    "video_note": "video",
    "document": "file",
}


def scope_of(event: MessageEvent) -> str | None:
    if isinstance(event, GroupMessageEvent):
        return group_scope(event.chat.id, PLATFORM)
    if isinstance(event, PrivateMessageEvent):
        return private_scope(event.chat.id, PLATFORM)
    return None  # a channel post: no one to answer, nothing of a chat's memory


def sender_of(event: MessageEvent) -> User | None:
    return getattr(event, "from_", None)


def user_name(user: User | None) -> str:
    if user is None:
        return ""
    name = " ".join(p for p in (user.first_name, user.last_name) if p)
    return clean_text(name or user.username or "").strip()


def segments(event: MessageEvent) -> list[dict[str, Any]]:
    """The message as archive segments (a quoted message first, as OneBot puts it)."""
    found: list[dict[str, Any]] = []
    if event.reply_to_message is not None:
        found.append({"type": "reply", "data": {"id": str(event.reply_to_message.message_id)}})
    found += [_segment(s.type, dict(s.data)) for s in event.original_message]
    return found


def _segment(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    if kind in _FILES:
        mapped: dict[str, Any] = {"file_id": data.get("file"), "telegram": kind}
        if kind in ("sticker", "animation"):
            mapped["sub_type"] = 1
        if kind == "document":
            mapped["name"] = data.get("file_name") or ""
        return {"type": _FILES[kind], "data": mapped}
    if "text" in data:
        entity = {} if kind == "text" else {"entity": kind}
        return {"type": "text", "data": {"text": data.get("text"), **entity}}
    return {"type": kind, "data": data}


def plain_text(event: MessageEvent, drop: Iterable[str] = ()) -> str:
    """The message's text, without the entities named in `drop` (the bot's @username)."""
    dropped = set(drop)
    return "".join(
        str(s.data.get("text", ""))
        for s in event.original_message
        if s.is_text() and str(s.data.get("text", "")) not in dropped
    )


def experience(
    event: MessageEvent, *, self_id: str, now: Callable[[], datetime]
) -> NewExperience | None:
    scope = scope_of(event)
    user = sender_of(event)
    if scope is None or user is None:
        return None
    converted = convert(segments(event))
    return NewExperience(
        scope=scope,
        fingerprint=str(event.message_id),
        sender_id=str(user.id),
        sender_name=user_name(user),
        is_bot=str(user.id) == self_id,
        text=converted.text,
        segments=converted.segments,
        reply_to=converted.reply_to,
        sent_at=event_instant(event.date) or now(),
        account=self_id or None,
    )


def _field(value: Any, name: str) -> Any:
    """A field of the Bot API's answer: the raw JSON object, as `on_called_api` hooks get
    it (the adapter's `call_api` makes the `Message` model only after the hooks ran), or
    that model."""
    return value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)


def sent_experience(
    self_id: str, result: Any, *, now: datetime, bot_name: str
) -> NewExperience | None:
    """What `send_message` returned (the Bot API's Message) -> our own message."""
    chat = _field(result, "chat")
    message_id = _field(result, "message_id")
    chat_id = _field(chat, "id")
    if chat_id is None or message_id is None:
        return None
    is_group = _field(chat, "type") in ("group", "supergroup")
    text = _field(result, "text") or _field(result, "caption") or ""
    converted = convert([{"type": "text", "data": {"text": text}}])
    reply_id: Any = _field(_field(result, "reply_to_message"), "message_id")
    return NewExperience(
        scope=(group_scope if is_group else private_scope)(chat_id, PLATFORM),
        fingerprint=str(message_id),
        sender_id=self_id,
        sender_name=bot_name,
        is_bot=True,
        text=converted.text,
        segments=converted.segments,
        reply_to=str(reply_id) if reply_id is not None else None,
        sent_at=now,
        account=self_id,
    )
