"""The 30-minute backfill job and the history converter it shares with /backfill."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from nonebot.adapters.onebot.v11 import ActionFailed, Bot
from nonebot_plugin_apscheduler import scheduler
from nonebug import App

from memory_core import NewExperience, Yuji
from memory_core.archive.drops import Drop
from nonebot_plugin_yuji.backfill_convert import history_parser
from nonebot_plugin_yuji.jobs import backfill as jobs_backfill
from tests.plugin.factories import BOT_ID

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def page(group_id: int, ids: range) -> dict[str, object]:
    return {
        "messages": [
            {
                "message_id": i,
                "time": 1_795_000_000 + i,
                "group_id": group_id,
                "sender": {"user_id": 200, "nickname": "群友", "card": "阿明"},
                "message": [{"type": "text", "data": {"text": f"第{i}条"}}],
            }
            for i in ids
        ]
    }


def test_the_job_is_scheduled_every_30_minutes_single_instance() -> None:
    job = scheduler.get_job(jobs_backfill.JOB_ID)
    if job is None:
        pytest.fail("backfill job was not scheduled at startup")
    assert job.trigger.interval == timedelta(seconds=1800)
    assert (job.max_instances, job.coalesce) == (1, True)


def test_history_items_convert_like_live_messages() -> None:
    parse = history_parser(100, BOT_ID, lambda: NOW)
    cq = parse(
        {
            "message_id": 7,
            "time": 1_795_000_000,
            "sender": {"user_id": int(BOT_ID), "nickname": "大肥鱼"},
            "message": "[CQ:reply,id=6]好的[CQ:face,id=1]",
        }
    )
    assert cq is not None
    assert (cq.scope, cq.fingerprint, cq.source, cq.is_bot) == ("group:100", "7", "backfill", True)
    assert (cq.text, cq.reply_to) == ("好的[表情]", "6")
    assert cq.sent_at == datetime.fromtimestamp(1_795_000_000, UTC)
    array = parse(page(100, range(1, 2))["messages"][0])  # type: ignore[index]
    assert array is not None
    assert (array.sender_name, array.text, array.is_bot) == ("阿明", "第1条", False)
    assert parse({"message_id": 8, "group_id": 999, "sender": {"user_id": 1}}) is None
    assert parse({"sender": {"user_id": 1}, "message": "no id"}) is None
    no_time = parse({"message_id": 9, "user_id": 5, "message": []})
    assert no_time is not None
    assert no_time.sent_at == NOW


async def test_every_group_of_every_bot_is_backfilled(app: App, yuji_core: Yuji) -> None:
    await yuji_core.archive.append(
        NewExperience(
            scope="group:100", fingerprint="2", sender_id="200", text="第2条", sent_at=NOW
        )
    )
    async with app.test_api() as ctx:
        ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.should_call_api("get_group_list", {}, result=[{"group_id": 100}, {"group_id": 200}])
        first = {"count": 50, "reverse_order": False}
        ctx.should_call_api(
            "get_group_msg_history", {"group_id": 100, **first}, page(100, range(1, 4))
        )
        ctx.should_call_api(
            "get_group_msg_history",
            {"group_id": 100, **first, "message_seq": 1},
            page(100, range(1, 2)),
        )
        for data in ({"group_id": 200, **first}, {"group_id": 200, "count": 50}, {"group_id": 200}):
            ctx.should_call_api("get_group_msg_history", data, exception=ActionFailed(retcode=1))
        await jobs_backfill.backfill_all()
    stored = await yuji_core.archive.recent("group:100", 10)
    assert [(e.fingerprint, e.source) for e in stored] == [
        ("2", "realtime"),
        ("1", "backfill"),
        ("3", "backfill"),
    ]
    assert await yuji_core.archive.recent("group:200", 10) == []


async def test_group_list_failure_falls_back_to_archived_groups(app: App, yuji_core: Yuji) -> None:
    await yuji_core.archive.append(
        NewExperience(scope="group:300", fingerprint="x", sender_id="200", text="hi", sent_at=NOW)
    )
    await yuji_core.archive.append(
        NewExperience(scope="private:5", fingerprint="y", sender_id="5", text="hi", sent_at=NOW)
    )
    async with app.test_api() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.should_call_api("get_group_list", {}, exception=ActionFailed(retcode=1))
        assert await jobs_backfill.group_ids(bot) == [300]


async def test_a_dropped_message_s_gap_is_backfilled_once(app: App, yuji_core: Yuji) -> None:
    await yuji_core.archive.append(
        NewExperience(
            scope="group:100", fingerprint="1", sender_id="200", text="第1条", sent_at=NOW
        )
    )
    heard = (await yuji_core.archive.recent("group:100", 1))[0].received_at
    yuji_core.archive.writer.drops.add(
        Drop("group:100", "2", heard + timedelta(seconds=1), "DataError", "a NUL byte")
    )
    assert "丢弃 1 条（DataError 1）" in (await yuji_core.archive.status_lines())["归档丢弃"]
    async with app.test_api() as ctx:
        ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.should_call_api(
            "get_group_msg_history",
            {"group_id": 100, "count": 50, "reverse_order": False},
            page(100, range(1, 4)),
        )
        await jobs_backfill.backfill_gaps()
        await jobs_backfill.backfill_gaps()  # taken once: no second call
    stored = await yuji_core.archive.recent("group:100", 10)
    assert sorted(e.fingerprint for e in stored) == ["1", "2", "3"]
