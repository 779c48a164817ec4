"""The consolidation jobs: reconcile first, then the scheduler runs; idle without a model."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from nonebot_plugin_apscheduler import scheduler

from memory_core import FakeClock, Yuji
from memory_core.consolidation.selection import Cut
from memory_core.llm import LLMRequest, ScriptedLLM, tool_call, tool_calls_response
from memory_core.llm.base import ChatResponse
from memory_core.types import NewExperience
from nonebot_plugin_yuji.jobs import consolidation as jobs_consolidation
from nonebot_plugin_yuji.jobs.consolidation import run_tick

SCRIPTED = ScriptedLLM()


def ack_nothing(request: LLMRequest) -> ChatResponse:
    token = (request.messages[1].content or "").split("token：", 1)[1].split("\n", 1)[0]
    return tool_calls_response(tool_call("acknowledge", {"token": token, "outcome": "nothing"}))


@pytest.fixture
def yuji_open_kwargs(yuji_clock: FakeClock, yuji_fetcher: Any) -> dict[str, Any]:
    return {"clock": yuji_clock, "fetcher": yuji_fetcher, "llm": SCRIPTED}


async def archive(core: Yuji, n: int, start: int = 0) -> list[int]:
    exps = [
        NewExperience(
            scope="group:7",
            fingerprint=str(start + i),
            sender_id="1",
            text=f"消息{i}",
            sent_at=core.clock.now() - timedelta(minutes=1),
        )
        for i in range(n)
    ]
    ids = await core.archive.append_many(exps)
    await core.archive.flush()
    return ids


async def until(check: Callable[[], Awaitable[bool]], timeout_s: float = 10.0) -> None:
    for _ in range(int(timeout_s / 0.02)):
        if await check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached")


async def test_tick_reconciles_then_the_scheduler_runs_and_wakes_on_new_messages(
    yuji_core: Yuji,
) -> None:
    ids = await archive(yuji_core, 12)
    repo = yuji_core.consolidation.repo
    # A batch left open by a crashed process:
    stale = await repo.create("group:7", Cut(ids[0], ids[-1], 12, 40), "old", yuji_core.clock.now())
    assert stale is not None
    await repo.delivered(stale.id, yuji_core.clock.now())
    SCRIPTED.default = ack_nothing
    try:
        assert await run_tick(yuji_core) == "scheduler running"
        assert (await repo.batch(stale.id)).state == "failed"

        async def acked(last: int) -> bool:
            return (await repo.cursor("group:7")).acked_id == last

        await until(lambda: acked(ids[-1]))
        more = await archive(yuji_core, 12, start=100)  # no tick: the archive wakes it
        await until(lambda: acked(more[-1]))
        assert await run_tick(yuji_core) == "scheduler running"  # idempotent
    finally:
        SCRIPTED.default = None
        await yuji_core.consolidation.aclose()


async def test_tick_skips_without_a_model(yuji_core: Yuji) -> None:
    await archive(yuji_core, 20)
    yuji_core.models = replace(yuji_core.models, consolidation=None)
    assert await run_tick(yuji_core) == "skipped: no model configured"
    assert await yuji_core.consolidation.repo.batches() == []


def test_jobs_are_scheduled_single_instance_and_coalesced() -> None:
    tick = scheduler.get_job(jobs_consolidation.TICK_JOB_ID)
    watchdog = scheduler.get_job(jobs_consolidation.WATCHDOG_JOB_ID)
    if tick is None or watchdog is None:  # scheduler not started in this session yet
        pytest.fail("consolidation jobs were not scheduled at startup")
    assert tick.max_instances == 1
    assert tick.coalesce is True
    assert tick.trigger.interval == timedelta(seconds=600)
    assert watchdog.max_instances == 1
