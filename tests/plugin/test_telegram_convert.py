"""Telegram updates -> archive rows (telegram_convert.py, pure): scopes of their own,
photos and stickers as image segments, the quoted message, the bot's @username dropped
from what the persona reads, a text_mention's member as whom the message @s."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, cast

from nonebot.adapters import Bot
from nonebot.adapters.telegram.event import Event, MessageEvent

from nonebot_plugin_yuji import telegram_convert
from nonebot_plugin_yuji.platforms import mentioned_ids

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def event(**fields: Any) -> MessageEvent:
    message: dict[str, Any] = {
        "message_id": 7,
        "date": 1_790_000_000,
        "chat": {"id": -100123456, "type": "supergroup", "title": "群"},
        "from": {"id": 5001, "is_bot": False, "first_name": "阿", "last_name": "明"},
        **fields,
    }
    parsed = Event.parse_event({"update_id": 1, "message": message})
    assert isinstance(parsed, MessageEvent)
    return parsed


def test_a_supergroup_photo_replying_to_a_message() -> None:
    quoted = {
        "message_id": 3,
        "date": 1_789_999_000,
        "chat": {"id": -100123456, "type": "supergroup"},
        "from": {"id": 5002, "is_bot": False, "first_name": "小红"},
        "text": "海边见",
    }
    photo = [{"file_id": "AgAD", "file_unique_id": "u", "width": 9, "height": 9}]
    exp = telegram_convert.experience(
        event(photo=photo, caption="看我拍的海", reply_to_message=quoted),
        self_id="123456",
        now=lambda: NOW,
    )
    assert exp is not None
    assert exp.scope == "telegram-group:-100123456"
    assert (exp.fingerprint, exp.sender_id, exp.sender_name) == ("7", "5001", "阿 明")
    assert exp.reply_to == "3"
    assert "[图片]" in exp.text
    assert "看我拍的海" in exp.text
    assert {"type": "reply", "data": {"id": "3"}} in exp.segments
    assert any(s["type"] == "image" and s["data"]["file_id"] == "AgAD" for s in exp.segments)
    assert exp.attachments == ()  # the file's URL holds the token: recorded, not fetched


def test_a_private_chat_and_the_bots_mention() -> None:
    private = event(chat={"id": 5001, "type": "private"}, text="你好")
    assert telegram_convert.scope_of(private) == "telegram-private:5001"
    mention = event(
        text="@yuji_bot 你记得吗", entities=[{"type": "mention", "offset": 0, "length": 9}]
    )
    assert telegram_convert.plain_text(mention, drop=("@yuji_bot",)).strip() == "你记得吗"
    exp = telegram_convert.experience(mention, self_id="123456", now=lambda: NOW)
    assert exp is not None
    assert exp.text == "@yuji_bot 你记得吗"


def test_a_text_mention_names_its_member_and_an_at_username_no_one() -> None:
    member = {"id": 5003, "is_bot": False, "first_name": "阿哲"}
    tagged = event(
        text="@yuji_bot 阿哲 下个月去哪 @xiaohong",
        entities=[
            {"type": "mention", "offset": 0, "length": 9},
            {"type": "text_mention", "offset": 10, "length": 2, "user": member},
            {"type": "mention", "offset": 19, "length": 9},
        ],
    )
    bot = cast(Bot, SimpleNamespace(self_id="123456"))
    assert mentioned_ids(bot, tagged) == ("5003",)
    assert mentioned_ids(bot, event(text="阿哲下个月去哪")) == ()
