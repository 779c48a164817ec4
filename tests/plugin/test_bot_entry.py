"""bot.py before `nonebot.init`: which secrets it masks (the real start is in tests/e2e)."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

import bot
from memory_core.cli.common import load_settings
from nonebot_plugin_yuji.config import Config, to_settings

TRICKY_ENV = """\
# a comment line, then every form python-dotenv reads
YUJI_RECALL_LIMIT=3 # the inline comment is no part of the value
export YUJI_LLM_MODEL=deepseek-chat
YUJI_LLM_BASE_URL = 'http://127.0.0.1:9/v1'
YUJI_NICKNAMES="小鱼, 大肥鱼"
YUJI_BACKUP_MIRROR="/mnt/backup # not a comment inside quotes"
yuji_attachment_allow_private=yes
YUJI_TELEGRAM_CHAT_ID=
YUJI_BATCH_MAX_CHARS=7000
"""


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


def test_the_bot_and_the_cli_read_one_tricky_env_file_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text(TRICKY_ENV, encoding="utf-8")
    for key in [k for k in os.environ if k.upper().startswith(("YUJI_", "ONEBOT_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("YUJI_BATCH_MAX_CHARS", "6500")  # the environment wins

    keywords = bot.nonebot_keywords(bot.read_settings(os.environ, tmp_path), os.environ)
    by_bot = to_settings(Config.model_validate(keywords))
    by_cli = load_settings(tmp_path)

    assert by_bot == by_cli
    assert (by_cli.recall_limit, by_cli.llm_model) == (3, "deepseek-chat")
    assert by_cli.llm_base_url == "http://127.0.0.1:9/v1"
    assert by_cli.nicknames == ("小鱼", "大肥鱼")
    assert by_cli.backup_mirror == "/mnt/backup # not a comment inside quotes"
    assert by_cli.attachment_allow_private is True
    assert (by_cli.telegram_chat_id, by_cli.batch_max_chars) == ("", 6500)


def test_no_secret_configured_finds_none(tmp_path: Path) -> None:
    assert bot.configured_secrets({"HOST": "127.0.0.1"}, tmp_path) == []


def test_an_access_token_means_nothing_to_say() -> None:
    assert bot.exposure("0.0.0.0", 8080, "a-token", allow_open=False) is None
    assert bot.exposure("0.0.0.0", 8080, 123456, allow_open=False) is None


def test_no_token_warns_on_loopback_and_refuses_elsewhere_unless_allowed() -> None:
    for host in ("127.0.0.1", "::1", "127.0.0.2", "localhost"):
        verdict = bot.exposure(host, 8080, None, allow_open=False)
        assert verdict is not None
        assert verdict[0] == "warn"
    for host in ("0.0.0.0", "192.168.1.5", "::"):
        assert bot.exposure(host, 8080, "", allow_open=False) == (
            "refuse",
            f"refusing to listen on {host} without ONEBOT_ACCESS_TOKEN: anyone who can reach "
            "port 8080 could send messages as the QQ client. Set the same token here and in "
            "the client, or YUJI_ALLOW_UNAUTHENTICATED_ONEBOT=true to accept anyone",
        )
        verdict = bot.exposure(host, 8080, "", allow_open=True)
        assert verdict is not None
        assert verdict[0] == "warn"


async def test_the_start_up_heap_is_frozen_out_of_the_collectors_sight() -> None:
    kept = [[i] for i in range(1000)]  # live, tracked objects made during start-up
    try:
        await bot.freeze_startup_heap()
        assert gc.get_freeze_count() >= len(kept)
        assert gc.is_tracked(kept[0])
        assert not any(o is kept[0] for o in gc.get_objects(2))  # not scanned any more
    finally:
        gc.unfreeze()  # the test process goes on collecting as before
    assert gc.get_freeze_count() == 0


def test_a_slip_of_a_nonebot_setting_is_named_with_the_setting_meant() -> None:
    names = [
        "NICKNAMES",
        "superuser",
        "COMMAND_STARTS",
        "ONEBOT_ACESS_TOKEN",
        "PROT",
        # Exact names, yuji's own (checked elsewhere) and the environment's usual
        # variables are no slips.
        "NICKNAME",
        "FASTAPI_RELOAD",
        "YUJI_NICKNAMES",
        *os.environ,
    ]
    assert bot.misspelled_nonebot_settings(names) == [
        "COMMAND_STARTS is not a NoneBot setting and is ignored; did you mean COMMAND_START?",
        "NICKNAMES is not a NoneBot setting and is ignored; did you mean NICKNAME?",
        "ONEBOT_ACESS_TOKEN is not a NoneBot setting and is ignored; did you mean "
        "ONEBOT_ACCESS_TOKEN?",
        "PROT is not a NoneBot setting and is ignored; did you mean PORT?",
        "SUPERUSER is not a NoneBot setting and is ignored; did you mean SUPERUSERS?",
    ]


def test_the_plugin_freezes_its_start_up_and_makes_full_collections_rarer() -> None:
    import nonebot_plugin_yuji

    before = gc.get_threshold()
    try:
        nonebot_plugin_yuji.settle_heap()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[:2] == before[:2]
        assert gc.get_threshold()[2] == max(before[2], nonebot_plugin_yuji.FULL_COLLECTION_EVERY)
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
