"""The ops glue under nonebug: the QQ-offline alert, the jobs, the log file."""

from __future__ import annotations

import logging
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from nonebot.adapters.onebot.v11 import Bot, HeartbeatMetaEvent, NoticeEvent
from nonebug import App

from memory_core import FakeClock, RecordingAlertSink, Settings, Yuji
from memory_core.ops.manifest import list_manifests
from nonebot_plugin_yuji import ops_logs
from nonebot_plugin_yuji.jobs import ops as jobs_ops

from .factories import BOT_ID, TIME, group_message


@pytest.fixture
def alerts() -> RecordingAlertSink:
    return RecordingAlertSink()


@pytest.fixture
def yuji_open_kwargs(yuji_clock: FakeClock, alerts: RecordingAlertSink) -> dict[str, Any]:
    return {"clock": yuji_clock, "alert_sink": alerts}


def offline_notice(**extra: Any) -> NoticeEvent:
    return NoticeEvent.model_validate(
        {
            "time": TIME,
            "self_id": int(BOT_ID),
            "post_type": "notice",
            "notice_type": "bot_offline",
            "user_id": int(BOT_ID),
            **extra,
        }
    )


def heartbeat(online: bool) -> HeartbeatMetaEvent:
    return HeartbeatMetaEvent.model_validate(
        {
            "time": TIME,
            "self_id": int(BOT_ID),
            "post_type": "meta_event",
            "meta_event_type": "heartbeat",
            "status": {"online": online, "good": online},
            "interval": 5000,
        }
    )


async def test_bot_offline_notice_alerts_and_a_heartbeat_recovers(
    app: App, yuji_core: Yuji, alerts: RecordingAlertSink
) -> None:
    key = f"bot_offline:{BOT_ID}"
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, heartbeat(True))  # routine: nothing to recover
        ctx.receive_event(bot, offline_notice(tag="被踢下线", message="账号在别处登录"))
        ctx.receive_event(bot, offline_notice(tag="被踢下线", message="again"))  # deduplicated
        ctx.receive_event(bot, heartbeat(False))  # deduplicated too
    assert alerts.fired == [
        (
            key,
            f"QQ 账号 {BOT_ID} 掉线了（被踢下线：账号在别处登录）。"
            "连接可能还在，但收不到也发不出消息；请到 NapCat 重新登录。",
        )
    ]
    assert alerts.recovered == []
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, heartbeat(True))
        ctx.receive_event(bot, heartbeat(True))
    assert alerts.recovered == [(key, f"QQ 账号 {BOT_ID} 重新在线。")]


async def test_an_offline_heartbeat_alone_alerts(
    app: App, yuji_core: Yuji, alerts: RecordingAlertSink
) -> None:
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, heartbeat(False))
    assert [k for k, _ in alerts.fired] == [f"bot_offline:{BOT_ID}"]
    assert "心跳" in alerts.fired[0][1]


async def test_jobs_back_up_when_due_and_run_the_daily_chores(
    yuji_core: Yuji, yuji_clock: FakeClock
) -> None:
    await jobs_ops.backup_tick()
    await jobs_ops.backup_tick()  # not due yet
    assert len(list_manifests(yuji_core.settings.backups_dir)) == 1
    yuji_clock.advance(timedelta(seconds=yuji_core.settings.backup_interval_s))
    await jobs_ops.backup_tick()
    assert len(list_manifests(yuji_core.settings.backups_dir)) == 2
    await jobs_ops.daily()  # capacity fine, nothing to clean: no alert
    assert (await yuji_core.ops.status()).failing_alerts == ()


async def test_log_file_is_named_by_day_and_masks_secrets(tmp_path: Path) -> None:
    from nonebot import logger

    settings = Settings(
        data_dir=tmp_path, llm_api_key="sk-very-secret-key", telegram_bot_token="42:tg-secret-part"
    )
    sink = ops_logs.install(settings, ops_logs.secrets_of(settings, ["onebot-access-token"]))
    try:
        logger.info("calling with sk-very-secret-key and onebot-access-token")
        logging.getLogger("yuji.test").info("url http://127.0.0.1:8081/bot42:tg-secret-part/x")
        logging.getLogger("httpx").warning("POST /bot42:tg-secret-part/sendMessage")
    finally:
        ops_logs.uninstall(sink)
    [log_file] = list((tmp_path / "logs").glob("yuji_*.log"))
    assert re.fullmatch(r"yuji_\d{4}-\d{2}-\d{2}\.log", log_file.name)
    text = log_file.read_text("utf-8")
    assert "calling with *** and ***" in text
    assert "url http://127.0.0.1:8081/bot***/x" in text
    for secret in ("sk-very-secret-key", "tg-secret-part", "onebot-access-token"):
        assert secret not in text
    assert not any(
        isinstance(h, ops_logs.LoguruHandler) for h in logging.getLogger("yuji").handlers
    )


async def test_log_file_leaves_out_nonebots_per_event_lines(app: App, tmp_path: Path) -> None:
    from nonebot import logger

    sink = ops_logs.install(Settings(data_dir=tmp_path), [])
    try:
        async with app.test_matcher() as ctx:
            bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
            ctx.receive_event(bot, group_message("明天去爬山", message_id=4242, group_id=42))
        logger.info("yuji line kept")
        logger.patch(lambda r: r.update(name="nonebot.message")).warning("a NoneBot warning")
    finally:
        ops_logs.uninstall(sink)
    [log_file] = list((tmp_path / "logs").glob("yuji_*.log"))
    text = log_file.read_text("utf-8")
    assert "yuji line kept" in text
    assert "[WARNING] nonebot.message | a NoneBot warning" in text
    assert "4242" not in text  # NoneBot's line for the message received
    assert "明天去爬山" not in text
