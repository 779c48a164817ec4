"""A Telegram chat end to end, from the Bot API to the nightly: `python bot.py` polls the
fake Bot API (nonebot-adapter-telegram, `TELEGRAM_BOTS` with `api_server` on
127.0.0.1) and serves a NapCat-like QQ peer at once, in a Telegram supergroup and a QQ
group with the same digits. The supergroup's title names the chat in the console (with
its platform) and follows a rename; then `yuji consolidate` and `yuji nightly --scope`
for the Telegram chat write its diary and cards, the diary prompt naming the chat as
Telegram's, and the QQ group of the same digits is not touched."""

from __future__ import annotations

import json
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory_core import Settings, Yuji
from tests.core.nightly.seed import prompt_kind
from tests.e2e.harness import BotProcess, count_rows, query, wait_until
from tests.e2e.test_nightly_e2e import SHANGHAI, cli, the_day
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server
from tests.fakes.telegram_server import FakeTelegramServer, telegram_server

pytestmark = pytest.mark.e2e
__all__ = ["openai_server", "telegram_server"]

TG_GROUP = -100123456
QQ_GROUP = 100123456
"""The same digits on two platforms: two chats."""
TG_SCOPE, QQ_SCOPE = f"telegram-group:{TG_GROUP}", f"group:{QQ_GROUP}"
TOKEN = "console-token-for-the-test"
TG_CHAT = [
    ("阿海", "周六我们去厦门看海边音乐节吧"),
    ("小鹿", "好啊，我订鼓浪屿边上的民宿"),
] * 3
QQ_CHAT = [("阿明", "下周五我要去成都参加马拉松"), ("小北", "加油，记得带能量胶")] * 3
TG_SUMMARY = "阿海和小鹿约好周六去厦门看海边音乐节，小鹿订鼓浪屿边的民宿。"
QQ_SUMMARY = "阿明下周五去成都参加马拉松，小北提醒带能量胶。"


def model(body: dict[str, Any]) -> Reply:
    """Consolidation tool calls and the nightly prompts, each answered from the chat in
    its own prompt (so one chat's words in another's diary would show)."""
    messages = body["messages"]
    user = str(messages[1]["content"])
    if body.get("tools"):
        token = user.split("token：", 1)[1].split("\n", 1)[0]
        summary = TG_SUMMARY if "厦门" in user else QQ_SUMMARY
        return Reply.tool(
            "acknowledge", {"token": token, "outcome": "extracted", "summary": summary}
        )
    said = "厦门音乐节" if "厦门" in user else "成都马拉松"
    payload: dict[str, Any] = {
        "diary": {"diary": f"今天大家在聊{said}。"},
        "cards": {
            "changes": [{"kind": "goals", "action": "add", "text": f"一起去{said}"}],
            "timeline": f"约好{said}",
        },
        "states": {"changes": []},
        "events": {"events": []},
        "settle": {"rewrites": []},
    }[prompt_kind(str(messages[0]["content"]))]
    return Reply.text(json.dumps(payload, ensure_ascii=False))


def console_page(port: int, path: str) -> str:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.read().decode("utf-8")


async def test_a_telegram_chat_is_named_and_goes_through_the_nightly_alone(
    tmp_path: Path, telegram_server: FakeTelegramServer, openai_server: FakeOpenAIServer
) -> None:
    day = the_day()
    evening = datetime(day.year, day.month, day.day, 20, 0, tzinfo=SHANGHAI)
    api_server = telegram_server.base_url.removesuffix("bot")
    bot = BotProcess(
        tmp_path,
        env={
            "DRIVER": "~fastapi+~httpx",
            "TELEGRAM_BOTS": json.dumps(
                [{"token": telegram_server.token, "api_server": api_server}]
            ),
            "YUJI_CONSOLE_TOKEN": TOKEN,
            "YUJI_VECTOR_MODE": "off",
            "YUJI_BACKFILL_INTERVAL_S": "0",
            "YUJI_CONSOLIDATION_TICK_S": "86400",
            "YUJI_ELIGIBLE_MIN_PENDING": "1000000",
            "YUJI_ELIGIBLE_MAX_WAIT_S": "86400",
        },
    )
    await bot.start()
    try:
        async with bot.peer() as peer:
            for i, (name, text) in enumerate(TG_CHAT):
                telegram_server.push_update(
                    {
                        "message_id": i + 1,
                        "date": int((evening + timedelta(minutes=i)).timestamp()),
                        "chat": {"id": TG_GROUP, "type": "supergroup", "title": "海边小分队"},
                        "from": {"id": 7000 + i % 2, "is_bot": False, "first_name": name},
                        "text": text,
                    }
                )
            for i, (name, text) in enumerate(QQ_CHAT):
                await peer.send_event(
                    peer.group_message(
                        text,
                        group_id=QQ_GROUP,
                        message_id=800 + i,
                        user_id=20000 + i % 2,
                        nickname=name,
                        time_=int((evening + timedelta(minutes=i)).timestamp()),
                    )
                )
            await wait_until(lambda: count_rows(bot.data_dir, "experiences") >= 12)

            # The console names the Telegram chat by its title, and says which platform.
            await wait_until(
                lambda: (
                    query(bot.database, "SELECT name FROM chat_names WHERE scope = ?", (TG_SCOPE,))
                    == [("海边小分队",)]
                )
            )
            overview = console_page(bot.port, "/yuji/")
            row = next(line for line in overview.splitlines() if TG_SCOPE in line and "<td" in line)
            assert "海边小分队" in row
            assert ">Telegram<" in row
            assert ">QQ<" not in row
            chat_page = console_page(bot.port, f"/yuji/chats/{TG_SCOPE}")
            assert (
                '<span class="platform">Telegram</span> <span class="chat-name">海边小分队'
                in chat_page
            )

            # A renamed supergroup: the next update carries the new title.
            telegram_server.push_update(
                {
                    "message_id": 99,
                    "date": int((evening + timedelta(minutes=30)).timestamp()),
                    "chat": {"id": TG_GROUP, "type": "supergroup", "title": "海边大分队"},
                    "from": {"id": 7000, "is_bot": False, "first_name": "阿海"},
                    "new_chat_title": "海边大分队",
                }
            )
            await wait_until(
                lambda: (
                    query(bot.database, "SELECT name FROM chat_names WHERE scope = ?", (TG_SCOPE,))
                    == [("海边大分队",)]
                )
            )
            assert query(
                bot.database, "SELECT name FROM chat_names WHERE scope = ?", (QQ_SCOPE,)
            ) != [("海边大分队",)]
    finally:
        await bot.stop()

    # The nightly for the Telegram chat alone.
    openai_server.handler = model
    # Both chats consolidated (a fragment each on that day), the night run for one.
    for scope in (QQ_SCOPE, TG_SCOPE):
        code, out = await cli(
            bot.data_dir, openai_server, "consolidate", "--once", "--force", "--scope", scope
        )
        assert code == 0, out
        assert f"{scope} #" in out, out
    code, out = await cli(
        bot.data_dir, openai_server, "nightly", "--day", day.isoformat(), "--scope", TG_SCOPE
    )
    assert code == 0, out
    assert any(line.startswith(f"{TG_SCOPE} {day} 小传 完成") for line in out.splitlines()), out
    assert QQ_SCOPE not in out

    diary_prompts = [
        r.prompt_text
        for r in openai_server.requests
        if not r.body.get("tools") and prompt_kind(str(r.body["messages"][0]["content"])) == "diary"
    ]
    assert len(diary_prompts) == 1
    assert f"聊天：Telegram 群「海边大分队」({TG_SCOPE})" in diary_prompts[0]
    assert "厦门" in diary_prompts[0]
    assert "成都" not in diary_prompts[0]

    core = await Yuji.open(Settings(data_dir=bot.data_dir))
    try:
        diary = await core.nightly.diary(TG_SCOPE, day.isoformat())
        assert diary is not None
        assert diary.content == "今天大家在聊厦门音乐节。"
        assert {c.kind: c.content for c in await core.nightly.cards(TG_SCOPE)} == {
            "goals": "一起去厦门音乐节"
        }
        # The QQ group of the same digits: its fragment of that day stays unarchived,
        # and it has no diary, cards or night run.
        assert query(
            bot.database, "SELECT summary, archived FROM fragments WHERE scope = ?", (QQ_SCOPE,)
        ) == [(QQ_SUMMARY, 0)]
        assert await core.nightly.diary(QQ_SCOPE, day.isoformat()) is None
        assert await core.nightly.cards(QQ_SCOPE) == []
        assert query(
            bot.database, "SELECT count(*) FROM nightly_runs WHERE scope = ?", (QQ_SCOPE,)
        ) == [(0,)]
    finally:
        await core.close()
