"""Secrets and exposure end to end: the real bot's own log at DEBUG, a client that puts
its token in the URL, and what the bot says about (or refuses with) an empty token."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from .harness import BotProcess, OnebotPeer, count_rows, running_bot, wait_until

pytestmark = pytest.mark.e2e

TOKEN = "e2e+onebot/token=secret"
"""Characters a URL encodes, so the query string carries `e2e%2Bonebot%2Ftoken%3Dsecret`."""
LLM_KEY = "sk-e2e-llm-key-secret"
TELEGRAM = "42:e2e-telegram-secret"


async def test_no_secret_reaches_the_log_at_debug_nor_from_a_query_string(
    tmp_path: Path,
) -> None:
    env = {
        "LOG_LEVEL": "DEBUG",
        "YUJI_LLM_API_KEY": LLM_KEY,
        "YUJI_TELEGRAM_BOT_TOKEN": TELEGRAM,
        "YUJI_TELEGRAM_CHAT_ID": "1",
        "YUJI_TELEGRAM_BASE_URL": "http://127.0.0.1:9/bot",
    }
    async with running_bot(tmp_path, env=env, access_token=TOKEN) as bot:
        # Some clients also put the token in the URL, URL-encoded.
        peer = OnebotPeer(f"{bot.ws_url}?access_token={quote(TOKEN, safe='')}", access_token=TOKEN)
        async with peer:
            await peer.send_event(peer.group_message("在吗", group_id=3, message_id=1))
            await wait_until(lambda: count_rows(bot.data_dir, "experiences") == 1)
        log = bot.log_text()

    assert "Loaded Config" in log  # the DEBUG line that used to carry them
    assert "access_token=***" in log  # uvicorn's line for the connection
    for secret in (TOKEN, quote(TOKEN, safe=""), LLM_KEY, "e2e-telegram-secret"):
        assert secret not in log


async def test_an_empty_token_is_warned_about_on_loopback(tmp_path: Path) -> None:
    async with running_bot(tmp_path, access_token="") as bot:
        async with bot.peer() as peer:
            await peer.send_event(peer.group_message("在吗", group_id=3, message_id=1))
            await wait_until(lambda: count_rows(bot.data_dir, "experiences") == 1)
        log = bot.log_text()
    [line] = [x for x in log.splitlines() if "ONEBOT_ACCESS_TOKEN is empty" in x]
    assert "[WARNING]" in line
    assert f"127.0.0.1:{bot.port}" in line


async def test_a_non_loopback_host_without_a_token_is_refused(tmp_path: Path) -> None:
    bot = BotProcess(tmp_path, env={"HOST": "0.0.0.0"}, access_token="")
    try:
        with pytest.raises(RuntimeError, match="bot exited with 2") as refused:
            await bot.start()
    finally:
        await bot.stop()
    assert "refusing to listen on 0.0.0.0 without ONEBOT_ACCESS_TOKEN" in str(refused.value)
    assert "YUJI_ALLOW_UNAUTHENTICATED_ONEBOT" in str(refused.value)
    assert not (tmp_path / "data" / "yuji.db").exists()  # nothing started
