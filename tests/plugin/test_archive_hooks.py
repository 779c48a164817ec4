"""The archive hooks under nonebug: group and private messages, and our own sends."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from inspect import signature
from typing import Any

import pytest
from nonebot.adapters.onebot.v11 import Bot, Event, Message, MessageSegment
from nonebot.adapters.telegram import Bot as TelegramBot
from nonebot.adapters.telegram.api import API as TelegramAPI
from nonebot.adapters.telegram.config import BotConfig
from nonebug import App

from memory_core import FakeFetcher, FetchedFile, Yuji

from .factories import BOT_ID, TIME, group_message, private_message


async def test_group_message_is_archived_with_card_and_segments(app: App, yuji_core: Yuji) -> None:
    event = group_message(
        [
            {"type": "at", "data": {"qq": "300", "name": "小明"}},
            {"type": "text", "data": {"text": " 明天去爬山 [CQ:at,qq=1]"}},
        ],
        message_id=555,
        group_id=42,
        user_id=200,
        card="阿鱼",
        nickname="fish",
    )
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, event)
    got = await yuji_core.archive.by_fingerprint("group:42", "555")
    assert got is not None
    assert got.text == "@小明 明天去爬山 [CQ:at,qq=1]"
    assert got.sender_id == "200"
    assert got.sender_name == "阿鱼"
    assert got.is_bot is False
    assert got.sent_at == datetime.fromtimestamp(TIME, UTC)
    assert got.segments[0] == {"type": "at", "data": {"qq": "300", "name": "小明"}}


async def test_private_message_is_archived_under_the_private_scope(
    app: App, yuji_core: Yuji
) -> None:
    event = private_message("在吗", message_id=777, user_id=321, nickname="小红")
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, event)
    got = await yuji_core.archive.by_fingerprint("private:321", "777")
    assert got is not None
    assert (got.text, got.sender_name) == ("在吗", "小红")


async def test_the_same_message_twice_is_archived_once(app: App, yuji_core: Yuji) -> None:
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, group_message("一", message_id=1))
        ctx.receive_event(bot, group_message("一 (replayed)", message_id=1))
    rows = await yuji_core.archive.after("group:100", 0, 10)
    assert [(r.fingerprint, r.text) for r in rows] == [("1", "一")]


async def test_reply_image_and_sticker_are_linked(
    app: App, yuji_core: Yuji, yuji_fetcher: FakeFetcher
) -> None:
    yuji_fetcher.files["https://img.example/a.png"] = FetchedFile(b"\x89PNG-a", "image/png")
    event = group_message(
        [
            {"type": "reply", "data": {"id": "9001"}},
            {"type": "image", "data": {"file": "a.png", "url": "https://img.example/a.png"}},
            {
                "type": "mface",
                "data": {"url": "https://img.example/missing.gif", "summary": "[开心]"},
            },
        ],
        message_id=12,
    )
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, event)
    await yuji_core.archive.wait_attachments()
    got = await yuji_core.archive.by_fingerprint("group:100", "12")
    assert got is not None
    assert got.reply_to == "9001"
    assert got.text == "[图片][开心]"
    linked = await yuji_core.archive.attachments_of("group:100", got.id)
    assert [(a.segment_index, a.attachment.status) for a in linked] == [
        (1, "stored"),
        (2, "failed"),
    ]


async def test_own_group_send_is_archived_as_bot(app: App, yuji_core: Yuji) -> None:
    async with app.test_api() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        message = Message([MessageSegment.reply(5), MessageSegment.text("我记住啦")])
        ctx.should_call_api(
            "send_group_msg", {"group_id": 42, "message": message}, result={"message_id": 8888}
        )
        await bot.send_group_msg(group_id=42, message=message)
    got = await yuji_core.archive.by_fingerprint("group:42", "8888")
    assert got is not None
    assert got.is_bot is True
    assert got.sender_id == BOT_ID
    assert got.sender_name == "大肥鱼"
    assert got.text == "我记住啦"
    assert got.reply_to == "5"


async def test_own_send_msg_private_with_cq_string(app: App, yuji_core: Yuji) -> None:
    async with app.test_api() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        data = {"message_type": "private", "user_id": 321, "message": "[CQ:face,id=1]好的"}
        ctx.should_call_api("send_msg", data, result={"message_id": 99})
        await bot.call_api("send_msg", **data)
    got = await yuji_core.archive.by_fingerprint("private:321", "99")
    assert got is not None
    assert got.is_bot is True
    assert got.text == "[表情]好的"


async def test_failed_or_other_api_calls_are_not_archived(app: App, yuji_core: Yuji) -> None:
    async with app.test_api() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.should_call_api("get_login_info", {}, result={"user_id": 1, "nickname": "x"})
        ctx.should_call_api(
            "send_group_msg", {"group_id": 1, "message": "x"}, exception=RuntimeError("offline")
        )
        await bot.get_login_info()
        with pytest.raises(RuntimeError, match="offline"):
            await bot.send_group_msg(group_id=1, message="x")
    assert await yuji_core.archive.scopes() == []


async def test_a_malformed_message_event_is_skipped(app: App, yuji_core: Yuji) -> None:
    # What the adapter makes of a message event it cannot parse: the bare base event.
    malformed = Event.model_validate(
        {"time": 1, "self_id": int(BOT_ID), "post_type": "message", "message_id": "x"}
    )
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, malformed)
        ctx.receive_event(bot, group_message("之后的消息照常存档", message_id=2))
    rows = await yuji_core.archive.after("group:100", 0, 10)
    assert [r.text for r in rows] == ["之后的消息照常存档"]


async def test_a_lone_surrogate_keeps_the_message_with_the_broken_half_replaced(
    app: App, yuji_core: Yuji
) -> None:
    # Defect 1: a client cut an emoji in half (`\ud83d` alone) in the text, the card,
    # the nickname and a segment key; the row used to never exist.
    event = group_message(
        [
            {"type": "text", "data": {"text": "半个表情\ud83d在这"}},
            {"type": "weird", "data": {"k\udc00ey": "v\ud83d"}},
        ],
        message_id=31,
        card="阿\ud83d鱼",
        nickname="fi\udcffsh",
    )
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, event)
    got = await yuji_core.archive.by_fingerprint("group:100", "31")
    assert got is not None
    assert got.text == "半个表情\ufffd在这[weird]"
    assert got.sender_name == "阿\ufffd鱼"
    assert got.segments[0]["data"]["text"] == "半个表情\ufffd在这"
    assert got.segments[1]["data"]["k\ufffdey"] == "v\ufffd"
    # The original code units stay recoverable from the stored segment.
    assert json.loads(got.segments[0]["original"]) == {"text": "半个表情\ud83d在这"}


async def test_own_telegram_send_is_archived_from_the_bot_apis_answer(
    app: App, yuji_core: Yuji
) -> None:
    """`on_called_api` gets the Bot API's raw JSON Message (the adapter validates it into
    its model only after the hooks ran): chat, message id, text and the reply target."""
    called: dict[str, Any] = dict.fromkeys(signature(TelegramAPI.send_message).parameters)
    called |= {"chat_id": 7001, "text": "考得怎么样？"}
    del called["self"]  # every parameter of the adapter's API, unset ones as None
    answer = {
        "message_id": 31,
        "date": TIME,
        "chat": {"id": 7001, "type": "private", "first_name": "阿哲"},
        "from": {"id": 123456, "is_bot": True, "first_name": "yuji"},
        "text": "考得怎么样？",
        "reply_to_message": {
            "message_id": 30,
            "date": TIME,
            "chat": {"id": 7001, "type": "private", "first_name": "阿哲"},
            "text": "我考完了",
        },
    }
    async with app.test_api() as ctx:
        bot = ctx.create_bot(
            base=TelegramBot, self_id="123456", config=BotConfig(token="123456:fake")
        )
        ctx.should_call_api("send_message", called, result=answer)
        await bot.send_message(chat_id=7001, text="考得怎么样？")
    got = await yuji_core.archive.by_fingerprint("telegram-private:7001", "31")
    assert got is not None
    assert (got.is_bot, got.sender_id, got.text, got.reply_to) == (
        True,
        "123456",
        "考得怎么样？",
        "30",
    )
