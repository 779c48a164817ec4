"""Issue 44's unprompted follow-up on Telegram, end to end: `python bot.py` polls the
fake Bot API (nonebot-adapter-telegram, `TELEGRAM_BOTS` with `api_server` on
127.0.0.1), and the fake model of tests/e2e/test_followups_e2e.py consolidates a private
chat's "我M月D号考四级" (sent five days ago, dated yesterday) into a plan due today.

While the Bot API answers the follow-up's `sendMessage` with an error, nothing is lost:
the follow-up stays due (not asked, nothing archived) and the job tries again. Once it
answers, the follow-up goes out as one `sendMessage` to that chat with the model's
text and no reply target, is archived as the bot's own message, and is asked.

The bot runs on the real clock, so its hours are opened to the whole day (the daytime
rule runs on a fake clock in tests/e2e/test_followups_clock_e2e.py)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, openai_server
from tests.fakes.telegram_server import BotApiRequest, FakeTelegramServer, telegram_server

from .harness import BotProcess, query, wait_until
from .test_followups_e2e import ASK, model, plan_day

pytestmark = pytest.mark.e2e
__all__ = ["openai_server", "telegram_server"]

CHAT = 7001
"""A private chat's id is its user's."""
SCOPE = f"telegram-private:{CHAT}"
REPLY_KEYS = ("reply_to_message_id", "reply_parameters")


def down(request: BotApiRequest) -> tuple[int, str] | None:
    """Telegram failing the follow-up's send (the chat's own answers still go out)."""
    if request.method == "sendMessage" and request.params.get("text") == ASK:
        return 502, "Bad Gateway"
    return None


def tried(server: FakeTelegramServer) -> list[dict[str, str]]:
    return [p for p in server.sent(CHAT) if p.get("text") == ASK]


def state_of(database: Path) -> list[tuple[str | None, str | None]]:
    return query(database, "SELECT state, sent_text FROM followups WHERE scope = ?", (SCOPE,))


def archived(database: Path) -> list[tuple[int]]:
    return query(
        database, "SELECT is_bot FROM experiences WHERE scope = ? AND text = ?", (SCOPE, ASK)
    )


async def test_a_due_follow_up_goes_out_through_send_message_and_survives_an_api_error(
    tmp_path: Path, telegram_server: FakeTelegramServer, openai_server: FakeOpenAIServer
) -> None:
    openai_server.handler = model
    telegram_server.fail_when = down
    day = plan_day()
    bot = BotProcess(
        tmp_path,
        env={
            **openai_server.env(),
            "DRIVER": "~fastapi+~httpx",
            "TELEGRAM_BOTS": json.dumps(
                [
                    {
                        "token": telegram_server.token,
                        "api_server": telegram_server.base_url.removesuffix("bot"),
                    }
                ]
            ),
            "YUJI_VECTOR_MODE": "off",
            "YUJI_BACKFILL_INTERVAL_S": "0",
            "YUJI_CONSOLIDATION_TICK_S": "1",
            "YUJI_ELIGIBLE_MAX_WAIT_S": "1",
            "YUJI_FOLLOWUP_CHECK_S": "1",
            "YUJI_FOLLOWUP_HOURS": "00:00-24:00",
            "YUJI_FOLLOWUP_QUIET_S": "0",
        },
    )
    await bot.start()
    try:
        person = {"id": CHAT, "is_bot": False, "first_name": "阿哲"}
        telegram_server.push_update(
            {
                "message_id": 1,
                "date": int(time.time()) - 5 * 86400,
                "chat": {"id": CHAT, "type": "private", "first_name": "阿哲"},
                "from": person,
                "text": f"我{day.month}月{day.day}号考四级",
            }
        )
        # Telegram down: the job keeps trying, and the follow-up stays due meanwhile.
        await wait_until(lambda: len(tried(telegram_server)) >= 2)
        assert state_of(bot.database) in ([], [(None, None)])
        assert archived(bot.database) == []

        # Telegram back: sent once, plainly, archived, asked.
        telegram_server.fail_when = None
        assert await wait_until(
            lambda: [row for row in state_of(bot.database) if row[0] == "asked"]
        ) == [("asked", ASK)]
        assert await wait_until(lambda: archived(bot.database)) == [(1,)]
        await asyncio.sleep(3)  # three more looks of the job
        *failed, sent = tried(telegram_server)
        assert failed  # the attempts Telegram refused
        assert sent["chat_id"] == str(CHAT)
        assert sent["text"] == ASK
        assert not [key for key in REPLY_KEYS if key in sent]  # no reply target
        assert len(tried(telegram_server)) == len(failed) + 1
    finally:
        await bot.stop()
