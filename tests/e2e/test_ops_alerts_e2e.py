"""Alerts end to end: the real bot, a OneBot peer, and a fake Telegram Bot API server.

The QQ account going offline (NapCat's `bot_offline` notice) reaches Telegram once,
a heartbeat saying "online" sends the recovery, and a down or hanging Telegram leaves
the bot archiving as usual.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes.telegram_server import FakeTelegramServer, closed_port, telegram_server

from .harness import DEFAULT_SELF_ID, count_rows, running_bot, wait_until

pytestmark = pytest.mark.e2e

__all__ = ["telegram_server"]


def offline_notice(self_id: int = DEFAULT_SELF_ID) -> dict[str, object]:
    return {
        "time": 1_795_000_000,
        "self_id": self_id,
        "post_type": "notice",
        "notice_type": "bot_offline",
        "user_id": self_id,
        "tag": "被踢下线",
        "message": "你的账号在另一台设备登录",
    }


async def test_qq_offline_reaches_telegram_once_then_recovers(
    tmp_path: Path, telegram_server: FakeTelegramServer
) -> None:
    env = {**telegram_server.env(chat_id="-100777"), "YUJI_ALERT_DEDUP_S": "3600"}
    key = f"[bot_offline:{DEFAULT_SELF_ID}]"

    def offline() -> list[Any]:
        # Only this key's messages count (see the end of the test).
        return [m for m in telegram_server.messages if key in m.text.split("\n")[0]]

    async with running_bot(tmp_path, env=env) as bot:
        async with bot.peer() as peer:
            await peer.send_event(offline_notice())
            [alert] = await wait_until(offline)
            await peer.send_event(offline_notice())  # held back: once per hour
            await peer.send_event(
                peer.meta("heartbeat", status={"online": True, "good": True}, interval=5000)
            )
            messages = await wait_until(lambda: offline() if len(offline()) >= 2 else None)
            await peer.send_event(peer.group_message("还在吗", group_id=5, message_id=1))
            await wait_until(lambda: count_rows(bot.data_dir, "experiences") == 1)
        log = bot.log_text() + "".join(
            p.read_text("utf-8") for p in (bot.data_dir / "logs").glob("*.log")
        )

    assert alert.chat_id == "-100777"
    assert alert.text.startswith(f"🔴 鱼记告警 [bot_offline:{DEFAULT_SELF_ID}]")
    assert "被踢下线：你的账号在另一台设备登录" in alert.text
    assert [m.text.split("\n")[0] for m in messages] == [
        f"🔴 鱼记告警 [bot_offline:{DEFAULT_SELF_ID}]",
        f"🟢 鱼记恢复 [bot_offline:{DEFAULT_SELF_ID}]",
    ]
    # Only this key's messages count: once, on a heavily loaded machine, a third message
    # arrived (not captured then; the list is printed now). Other alerts have their
    # own tests.
    assert len(offline()) == 2, [m.text for m in telegram_server.messages]
    assert telegram_server.token.split(":")[1] not in log


async def test_a_down_telegram_leaves_the_bot_working(tmp_path: Path) -> None:
    env = {
        "YUJI_TELEGRAM_BOT_TOKEN": "42:e2e-secret-token-part",
        "YUJI_TELEGRAM_CHAT_ID": "1",
        "YUJI_TELEGRAM_BASE_URL": f"http://127.0.0.1:{closed_port()}/bot",
    }
    async with running_bot(tmp_path, env=env) as bot:
        async with bot.peer() as peer:
            await peer.send_event(offline_notice())
            for i in range(1, 21):
                await peer.send_event(peer.group_message(f"消息{i}", group_id=6, message_id=i))
            await wait_until(lambda: count_rows(bot.data_dir, "experiences") == 20)
            await wait_until(lambda: "telegram alert attempt 1/3 failed" in bot.log_text())
        assert bot.running
    log = bot.log_text()
    assert "ALERT [bot_offline" in log  # the alert is in the log regardless
    assert "e2e-secret-token-part" not in log


async def test_a_hanging_telegram_leaves_the_bot_working(
    tmp_path: Path, telegram_server: FakeTelegramServer
) -> None:
    telegram_server.hold()  # every Bot API request hangs until the test ends
    async with running_bot(tmp_path, env=telegram_server.env()) as bot:
        async with bot.peer() as peer:
            await peer.send_event(offline_notice())
            await wait_until(lambda: telegram_server.requests)  # the send is stuck
            for i in range(1, 21):
                await peer.send_event(peer.group_message(f"消息{i}", group_id=7, message_id=i))
            await wait_until(lambda: count_rows(bot.data_dir, "experiences") == 20)
        assert bot.running
    telegram_server.release()
