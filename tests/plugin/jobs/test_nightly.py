"""The nightly jobs: a cron at the cutoff in the configured zone, and the retry tick."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from nonebot_plugin_apscheduler import scheduler

from memory_core import FakeClock, Yuji
from memory_core.llm import ScriptedLLM
from memory_core.llm.fake import text_response
from memory_core.nightly import StepReport
from nonebot_plugin_yuji.jobs import nightly as jobs_nightly
from tests.core.nightly.seed import fragment, quiet_responder, sh

SCRIPTED = ScriptedLLM()
SCOPE = "group:7"


@pytest.fixture
def yuji_clock() -> FakeClock:
    return FakeClock(sh(2026, 11, 20, 4, 0))


@pytest.fixture
def yuji_open_kwargs(yuji_clock: FakeClock, yuji_fetcher: Any) -> dict[str, Any]:
    return {"clock": yuji_clock, "fetcher": yuji_fetcher, "llm": SCRIPTED}


def test_cron_fields_follow_the_setting_and_zone() -> None:
    assert jobs_nightly.cron_kwargs("04:00", "Asia/Shanghai") == {
        "hour": 4,
        "minute": 0,
        "timezone": ZoneInfo("Asia/Shanghai"),
    }
    assert jobs_nightly.cron_kwargs("23:30", "UTC")["minute"] == 30


def test_summary_counts_chats_and_outcomes() -> None:
    reports = [
        StepReport("group:1", "2026-11-19", "diary", "done"),
        StepReport("group:1", "2026-11-19", "cards", "failed"),
        StepReport("group:2", "2026-11-19", "diary", "skipped"),
        StepReport("*", "2026-11-19", "gc", "done"),
    ]
    assert jobs_nightly.summary(reports) == "2 chat(s): 2 done, 1 failed, 1 skipped"
    assert jobs_nightly.summary([]) == "0 chat(s): nothing to do"


def test_jobs_are_scheduled_single_instance_and_coalesced() -> None:
    night = scheduler.get_job(jobs_nightly.NIGHT_JOB_ID)
    retry = scheduler.get_job(jobs_nightly.RETRY_JOB_ID)
    if night is None or retry is None:
        pytest.fail("nightly jobs were not scheduled at startup")
    assert (night.max_instances, night.coalesce) == (1, True)
    assert str(night.trigger.timezone) == "Asia/Shanghai"
    fields = {f.name: str(f) for f in night.trigger.fields}
    assert (fields["hour"], fields["minute"]) == ("4", "0")
    fire = night.trigger.get_next_fire_time(None, datetime(2026, 11, 20, 12, 0, tzinfo=UTC))
    assert fire == datetime(2026, 11, 20, 20, 0, tzinfo=UTC)  # 04:00 in Shanghai
    assert (retry.max_instances, retry.coalesce) == (1, True)
    assert retry.trigger.interval == timedelta(seconds=jobs_nightly.RETRY_TICK_S)


async def test_the_night_job_runs_yesterday_and_the_retry_tick_retries(
    yuji_core: Yuji, yuji_clock: FakeClock
) -> None:
    await fragment(yuji_core, SCOPE, sh(2026, 11, 19, 21, 0), "南杉说出差回来了。")
    SCRIPTED.default = text_response("抱歉，我无法完成。")

    await jobs_nightly.night()

    last = await yuji_core.nightly.last_run(SCOPE)
    assert (last.day, last.consecutive_failures) == ("2026-11-19", 1)
    yuji_clock.advance(timedelta(hours=2))
    SCRIPTED.default = quiet_responder

    await jobs_nightly.retry()

    last = await yuji_core.nightly.last_run(SCOPE)
    assert (last.consecutive_failures, last.retry_at) == (0, None)
    assert {s.state for s in last.steps} == {"done"}
    diary = await yuji_core.nightly.diary(SCOPE, "2026-11-19")
    assert diary is not None
    assert diary.content == "平常的一天。"
    SCRIPTED.default = None
