"""bot.py before `nonebot.init`: which secrets it masks (the real start is in tests/e2e)."""

from __future__ import annotations

from pathlib import Path

import bot


def test_configured_secrets_come_from_every_source_nonebot_reads(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "ENVIRONMENT=dev\nYUJI_LLM_API_KEY=sk-from-dotenv\nHOST=0.0.0.0\n", encoding="utf-8"
    )
    (tmp_path / ".env.dev").write_text('yuji_telegram_bot_token="42:from-env-dev"\n', "utf-8")
    environ = {"ONEBOT_ACCESS_TOKEN": "token-from-environ", "YUJI_LLM_API_KEY": "sk-from-environ"}

    found = bot.configured_secrets(environ, tmp_path)

    assert sorted(found) == sorted(
        ["sk-from-dotenv", "42:from-env-dev", "token-from-environ", "sk-from-environ"]
    )


def test_no_secret_configured_finds_none(tmp_path: Path) -> None:
    assert bot.configured_secrets({"HOST": "127.0.0.1"}, tmp_path) == []
