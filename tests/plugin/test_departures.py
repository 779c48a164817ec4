"""A member leaving a group (`group_decrease`, parsed by the real adapter) is recorded
for carrying; the account leaving, or another notice, is not."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from nonebot.adapters.onebot.v11 import Adapter, Bot, Event
from nonebot.adapters.telegram.event import LeftChatMemberEvent
from nonebug import App
from sqlalchemy import select

from memory_core import Yuji
from memory_core.storage.schema import chat_departures
from nonebot_plugin_yuji import departures
from nonebot_plugin_yuji.frames import needs_handlers

from .factories import BOT_ID, TIME


def notice(**fields: Any) -> dict[str, Any]:
    return {"time": TIME, "self_id": int(BOT_ID), "post_type": "notice", **fields}


def parsed(data: dict[str, Any]) -> Event:
    event = Adapter.json_to_event(data)
    assert event is not None
    return event


async def test_a_member_leaving_is_recorded(app: App, yuji_core: Yuji) -> None:
    raw = notice(
        notice_type="group_decrease", sub_type="leave", group_id=100, user_id=7, operator_id=7
    )
    assert needs_handlers(raw)  # the ingest adapter passes it on to the handlers
    async with app.test_matcher(departures.left) as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID, auto_connect=False)
        ctx.receive_event(bot, parsed(raw))
    async with yuji_core.db.read() as conn:
        rows = (await conn.execute(select(chat_departures))).all()
    assert [(r.scope, r.user_id, r.left_at) for r in rows] == [
        ("group:100", "7", datetime.fromtimestamp(TIME, UTC))
    ]


def test_the_account_leaving_or_another_notice_is_no_departure() -> None:
    me = notice(notice_type="group_decrease", sub_type="kick_me", group_id=100, user_id=int(BOT_ID))
    assert not departures.leaves_a_group(me)
    assert not departures.leaves_a_group(
        notice(notice_type="group_increase", group_id=1, user_id=7)
    )
    assert departures.leaves_a_group(
        notice(notice_type="group_decrease", sub_type="kick", group_id=1, user_id=7)
    )


def test_a_telegram_member_leaving_is_a_departure_the_account_is_not() -> None:
    raw = {
        "message_id": 5,
        "chat": {"id": -100123, "type": "supergroup", "title": "摸鱼"},
        "date": TIME,
        "left_chat_member": {"id": 4242, "is_bot": False, "first_name": "Lin"},
    }
    event = LeftChatMemberEvent.model_validate(raw)
    assert departures.telegram_departure(event, "777") == (
        "telegram-group:-100123",
        "4242",
        datetime.fromtimestamp(TIME, UTC),
    )
    assert departures.telegram_departure(event, "4242") is None
