"""Token accounting: one `llm_usage` row per model call, failed ones included, and the
totals `/status` and `yuji status` show."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from memory_core import FakeClock, Settings, Yuji
from memory_core.cli import status as status_cli
from memory_core.errors import LLMRateLimited, LLMTimeout, LLMToolsUnsupported, LLMUnavailable
from memory_core.llm.base import ChatResponse
from memory_core.llm.fake import LLMRequest, ScriptedLLM
from memory_core.llm.metered import outcome_of
from memory_core.llm.usage import day_starts, usage_line
from memory_core.storage.ops.usage_repo import JobTotals
from tests.core.chat.test_service import incoming
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

__all__ = ["openai_server"]

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
USAGE = {
    "prompt_tokens": 1200,
    "completion_tokens": 30,
    "total_tokens": 1230,
    "prompt_tokens_details": {"cached_tokens": 1024},
}


async def send(text: str) -> str:
    return "bot-1"


async def test_every_call_is_recorded_failed_ones_too(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    openai_server.push(Reply(content="在呢", usage=USAGE), Reply.error(401, '{"error": "bad key"}'))
    settings = Settings(
        data_dir=tmp_path / "data",
        llm_base_url=openai_server.base_url,
        llm_model="fake-model",
        llm_max_retries=0,
    )
    core = await Yuji.open(settings, clock=FakeClock(NOW))
    try:
        ok = await core.chat.respond(incoming("大肥鱼在吗"), send)
        failed = await core.chat.respond(incoming("大肥鱼在吗", "in-2"), send)
        assert (ok.kind, failed.kind) == ("reply", "failure")
        rows = list(reversed(await core.usage.repo.rows()))
    finally:
        await core.close()
    assert [(r.job, r.model, r.scope, r.outcome) for r in rows] == [
        ("chat", "fake-model", "group:1", "ok"),
        ("chat", "fake-model", "group:1", "unavailable"),
    ]
    assert (rows[0].prompt_tokens, rows[0].completion_tokens, rows[0].cached_tokens) == (
        1200,
        30,
        1024,
    )
    assert (rows[1].prompt_tokens, rows[1].completion_tokens) == (0, 0)
    assert rows[0].at == NOW
    assert all(r.latency_ms >= 0 for r in rows)


async def test_each_job_is_recorded_under_its_name(tmp_path: Path) -> None:
    from tests.core.consolidation.conftest import seed, token_of
    from tests.core.nightly.seed import fragment, quiet_responder, sh

    def answer(request: LLMRequest) -> ChatResponse:
        if request.tools:
            from memory_core.llm import tool_call, tool_calls_response

            ack = tool_call("acknowledge", {"token": token_of(request), "outcome": "nothing"})
            return tool_calls_response(ack)
        return quiet_responder(request)

    clock = FakeClock(sh(2026, 11, 20, 12, 0))
    core = await Yuji.open(
        Settings(data_dir=tmp_path / "data"), clock=clock, llm=ScriptedLLM(default=answer)
    )
    try:
        await seed(core, "group:1", 15)
        report = await core.consolidation.run_once(force=True)
        assert report is not None
        assert report.state == "done"
        await fragment(core, "group:1", sh(2026, 11, 20, 9, 0), "聊了鱼。")
        clock.set(sh(2026, 11, 21, 4, 0))
        await core.nightly.run()
        rows = await core.usage.repo.rows()
    finally:
        await core.close()
    jobs = {(r.job, r.scope, r.model) for r in rows}
    assert ("consolidation", "group:1", "injected") in jobs
    assert ("nightly", "group:1", "injected") in jobs
    assert all(r.outcome == "ok" for r in rows)


async def test_a_call_cut_off_by_the_reply_deadline_is_recorded(tmp_path: Path) -> None:
    async def hang(_: LLMRequest) -> ChatResponse:
        await asyncio.sleep(30)
        raise AssertionError("not reached")

    core = await Yuji.open(
        Settings(data_dir=tmp_path / "data", llm_timeout_s=0.05),
        clock=FakeClock(NOW),
        llm=ScriptedLLM(default=hang),
    )
    core.chat.deadline_grace_s = 0.05
    try:
        outcome = await core.chat.respond(incoming("大肥鱼在吗"), send)
        assert outcome.kind == "failure"
        for client in core.models.metered:
            await client.drain()
        rows = await core.usage.repo.rows()
    finally:
        await core.close()
    assert [r.outcome for r in rows] == ["cancelled"]


async def test_status_shows_tokens_per_job_and_the_cache_share(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    openai_server.push(Reply(content="在呢", usage=USAGE))
    settings = Settings(
        data_dir=tmp_path / "data", llm_base_url=openai_server.base_url, llm_model="fake-model"
    )
    core = await Yuji.open(settings, clock=FakeClock(NOW))
    try:
        await core.chat.respond(incoming("大肥鱼在吗"), send)
        lines = (await core.chat_status.scope_status("group:1")).extra
        other = (await core.chat_status.scope_status("group:2")).extra
        data = await status_cli.collect(core)
    finally:
        await core.close()
    assert lines["模型用量（今天）"] == "聊天 1230（缓存 85%）"
    assert lines["模型用量（7天）"] == "聊天 1230（缓存 85%）"
    assert other["模型用量（今天）"] == "无"
    chat = data["llm_usage"]["today"]["chat"]
    assert chat["prompt_tokens"] == 1200
    assert chat["cached_tokens"] == 1024
    assert chat["cache_hit_share"] == round(1024 / 1200, 4)
    assert "模型用量" in status_cli.render(data)


def test_usage_line_and_outcomes_are_pure() -> None:
    totals = [
        JobTotals("chat", 3, 0, 10000, 2345, 5000),
        JobTotals("consolidation", 4, 2, 300, 0, 0),
    ]
    assert usage_line(totals) == "聊天 1.2万（缓存 50%），整理 300（缓存 0%，失败 2 次）"
    assert usage_line([]) == "无"
    assert [
        outcome_of(e)
        for e in (
            None,
            LLMTimeout("t"),
            LLMRateLimited("r"),
            LLMToolsUnsupported("x"),
            LLMUnavailable("u"),
            asyncio.CancelledError(),
            RuntimeError("bug"),
        )
    ] == ["ok", "timeout", "rate_limited", "no_tools", "unavailable", "cancelled", "error"]


def test_days_are_local_calendar_days() -> None:
    zone = ZoneInfo("Asia/Shanghai")
    # 2026-11-20 17:30 UTC is already the 21st in Shanghai.
    today, week = day_starts(datetime(2026, 11, 20, 17, 30, tzinfo=UTC), zone)
    assert today == datetime(2026, 11, 21, 0, 0, tzinfo=zone)
    assert week == datetime(2026, 11, 15, 0, 0, tzinfo=zone)
