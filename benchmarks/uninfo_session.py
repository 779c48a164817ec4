"""Who/where/what of a message: yuji's platforms.py against nonebot-plugin-uninfo (+ alconna).

    .venv/bin/python -m benchmarks.uninfo_session [--events 20000] [--groups 5] [--members 37]

The same parsed events (OneBot v11 group messages over `--groups` groups and
`--members` senders, as benchmarks/ingest_stock_adapter.py sends them; and Telegram
supergroup messages) go through

- who and where: `platforms.chat_scope` and the sender read from the event, against
  `nonebot_plugin_uninfo.get_session` (its cache of 300 s on, as by default);
- what: `platforms.experience_of` (the whole archive row: scope, sender, text,
  segments, reply, attachments), against alconna's `UniMessage.of(...)` (segments only:
  the row would still be built from them).

The bots' `call_api` answers at once from memory (a real client answers over the
WebSocket in about a millisecond, the Bot API over HTTPS in tens), and each call is
counted: uninfo asks the client for the group and the member (on Telegram the
member's profile photos and membership) the first time it sees a (chat, member), and
again once its cache expires. Reported: microseconds per event (steady state, every session cached;
and the first pass, every session new), client calls per event, and what that is at
300 messages/s.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import nonebot
from nonebot.adapters.onebot import v11
from nonebot.adapters.telegram import Adapter as TelegramAdapter
from nonebot.adapters.telegram import Bot as TelegramBot
from nonebot.adapters.telegram.config import BotConfig
from nonebot.adapters.telegram.event import Event as TelegramEvent
from nonebot.adapters.telegram.model import ChatMemberMember, User, UserProfilePhotos

RATE = 300
calls: Counter[str] = Counter()


async def _answer(api: str, **data: Any) -> Any:
    calls[api] += 1
    if api == "get_group_info":
        return {"group_id": data["group_id"], "group_name": "群", "member_count": 50}
    if api == "get_group_member_info":
        return {"user_id": data["user_id"], "nickname": "群友", "card": "", "role": "member"}
    if api == "get_user_profile_photos":  # the Telegram bot's methods return models
        return UserProfilePhotos(total_count=0, photos=[])
    if api == "get_chat_member":
        return ChatMemberMember(
            status="member", user=User(id=data["user_id"], is_bot=False, first_name="群友")
        )
    return {}


def onebot_events(n: int, groups: int, members: int) -> list[v11.Event]:
    now = int(time.time())
    return [
        v11.Adapter.json_to_event(
            {
                "time": now,
                "self_id": 10000,
                "post_type": "message",
                "message_type": "group",
                "sub_type": "normal",
                "message_id": 1_000_000 + i,
                "group_id": 710_000 + i % groups,
                "user_id": 30_000 + i % members,
                "anonymous": None,
                "message": [{"type": "text", "data": {"text": f"第{i}条消息，随便聊聊今天的天气"}}],
                "raw_message": f"第{i}条消息，随便聊聊今天的天气",
                "font": 14,
                "sender": {"user_id": 30_000 + i % members, "nickname": "群友", "card": ""},
            }
        )  # pyright: ignore[reportReturnType]
        for i in range(n)
    ]


def telegram_events(n: int, groups: int, members: int) -> list[TelegramEvent]:
    now = int(time.time())
    return [
        TelegramEvent.parse_event(
            {
                "update_id": i + 1,
                "message": {
                    "message_id": i + 1,
                    "date": now,
                    "chat": {"id": -100_710_000 - i % groups, "type": "supergroup", "title": "群"},
                    "from": {"id": 30_000 + i % members, "is_bot": False, "first_name": "群友"},
                    "text": f"第{i}条消息，随便聊聊今天的天气",
                },
            }
        )
        for i in range(n)
    ]


async def measure(events: list[Any], bots: dict[str, Any]) -> dict[str, tuple[float, float, float]]:
    """kind -> (µs/event on the first pass, µs/event cached, client calls/event)."""
    from nonebot_plugin_alconna import UniMessage
    from nonebot_plugin_uninfo import get_session

    from nonebot_plugin_yuji.archive_convert import display_name
    from nonebot_plugin_yuji.platforms import chat_scope, experience_of
    from nonebot_plugin_yuji.telegram_convert import sender_of, user_name

    now = datetime.now(UTC)
    bot = bots["telegram" if isinstance(events[0], TelegramEvent) else "onebot"]
    out: dict[str, tuple[float, float, float]] = {}

    async def who_ours(event: Any) -> None:
        chat_scope(event)
        if isinstance(event, TelegramEvent):
            user_name(sender_of(event))  # pyright: ignore[reportArgumentType]
        else:
            display_name(event.sender.card, event.sender.nickname)

    async def who_uninfo(event: Any) -> None:
        await get_session(bot, event)

    async def what_ours(event: Any) -> None:
        experience_of(bot, event, now=now)

    async def what_alconna(event: Any) -> None:
        UniMessage.of(event.get_message(), bot)

    steps = {
        "who/where, ours (chat_scope + sender)": who_ours,
        "who/where, uninfo get_session": who_uninfo,
        "the archive row, ours (experience_of)": what_ours,
        "segments, alconna UniMessage.of": what_alconna,
    }
    for name, step in steps.items():
        calls.clear()
        passes: list[float] = []
        for _ in range(2):  # the first pass meets every session new; the second, cached
            start = time.perf_counter()
            for event in events:
                await step(event)
            passes.append((time.perf_counter() - start) / len(events) * 1e6)
        out[name] = (passes[0], passes[1], sum(calls.values()) / len(events))
    return out


async def main(n: int, groups: int, members: int) -> None:
    nonebot.init(driver="~none")
    driver = nonebot.get_driver()
    driver.register_adapter(v11.Adapter)
    driver.register_adapter(TelegramAdapter)
    nonebot.require("nonebot_plugin_uninfo")
    nonebot.require("nonebot_plugin_alconna")
    onebot = v11.Bot(nonebot.get_adapter(v11.Adapter), "10000")
    telegram = TelegramBot(nonebot.get_adapter(TelegramAdapter), "1", config=BotConfig(token="1:x"))
    for bot in (onebot, telegram):
        bot.call_api = _answer  # pyright: ignore[reportAttributeAccessIssue]
    bots = {"onebot": onebot, "telegram": telegram}
    print(f"{n} events per platform, {groups} groups x {members} senders")
    for platform, events in (
        ("OneBot v11", onebot_events(n, groups, members)),
        ("Telegram", telegram_events(n, groups, members)),
    ):
        for name, (first, cached, per_event) in (await measure(events, bots)).items():
            print(
                f"{platform:10} {name:38} first pass {first:7.1f} µs/event, cached {cached:7.1f} "
                f"µs/event = {cached * RATE / 1e4:.2f}% of a core at {RATE} msg/s; "
                f"{per_event:.4f} client calls/event"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--groups", type=int, default=5)
    parser.add_argument("--members", type=int, default=37)
    args = parser.parse_args()
    asyncio.run(main(args.events, args.groups, args.members))
