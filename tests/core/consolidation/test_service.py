"""The service around one batch: choosing, latching, capping, alerting and healing."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import text, update

from memory_core import FakeClock, Settings, Yuji
from memory_core.consolidation.selection import Cut
from memory_core.consolidation.service import ConsolidationService
from memory_core.errors import BatchError, LLMUnavailable
from memory_core.llm import LLMRequest, OpenAICompatibleClient, ScriptedLLM, text_response
from memory_core.llm.base import ChatResponse
from memory_core.ops.alerts import RecordingAlertSink
from memory_core.settings import LiveSettings
from memory_core.storage.schema import consolidation_batches, consolidation_cursors
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

from .conftest import G1, G2, ack_nothing, ids_in_prompt, run_batch, seed

__all__ = ["openai_server"]


async def test_no_model_means_no_consolidation(core: Yuji, sink: RecordingAlertSink) -> None:
    service = ConsolidationService(
        core.db, core.live, core.clock, archive=core.archive, memories=core.memories,
        llm=None, alerts=sink,
    )  # fmt: skip
    await seed(core, n=20)
    with pytest.raises(LLMUnavailable):
        await service.run_once()


async def test_not_eligible_until_twelve_or_two_hours(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM, clock: FakeClock
) -> None:
    await seed(core, n=11)
    llm.push(ack_nothing)
    assert await service.run_once() is None
    assert "nothing eligible" in service.last_skip
    clock.advance(timedelta(hours=2))
    report = await run_batch(service)
    assert (report.state, report.messages) == ("done", 11)


async def test_force_runs_a_small_batch(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM
) -> None:
    await seed(core, n=3)
    llm.push(ack_nothing)
    assert await service.run_once(scope=G1) is None
    report = await run_batch(service, scope=G1, force=True)
    assert report.messages == 3


async def test_oldest_waiting_chat_goes_first(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM, clock: FakeClock
) -> None:
    await seed(core, G2, n=12)
    clock.advance(timedelta(minutes=5))
    await seed(core, G1, n=30)
    llm.push(ack_nothing, ack_nothing)
    first = await run_batch(service)
    second = await run_batch(service)
    assert [first.scope, second.scope] == [G2, G1]


async def test_the_optional_hourly_ceiling_and_force(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM, clock: FakeClock
) -> None:
    assert core.settings.consolidation_hourly_cap == 0  # off by default
    core.live.current = core.settings.with_changes(consolidation_hourly_cap=4)
    await seed(core, n=300)
    llm.default = ack_nothing
    for _ in range(4):
        report = await run_batch(service)
        assert report.state == "done"
        clock.advance(timedelta(minutes=1))
    assert await service.run_once() is None
    assert "hourly ceiling of 4" in service.last_skip
    await run_batch(service, force=True)
    clock.advance(timedelta(minutes=57))
    assert await service.run_once() is not None


async def test_range_is_latched_while_new_messages_arrive(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM
) -> None:
    ids = await seed(core, n=15)
    late: list[int] = []

    async def arrive_then_ack(request: LLMRequest) -> ChatResponse:
        late.extend(await seed(core, n=5, start=1000))
        return ack_nothing(request)

    llm.push(arrive_then_ack)
    report = await run_batch(service)
    assert report.last_id == ids[-1]
    assert ids_in_prompt(llm.requests[0]) == ids
    assert (await service.repo.cursor(G1)).acked_id == ids[-1]
    status = await service.status(G1)
    assert status.pending == 5
    assert status.last_batch is not None
    assert status.last_batch.id == report.batch_id
    assert min(late) > ids[-1]


async def test_one_open_batch_per_chat_and_the_concurrency_limit_across_chats(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM
) -> None:
    g1 = await seed(core, G1, n=12)
    g2 = await seed(core, G2, n=12)
    g3 = await seed(core, "group:3", n=12)
    now = core.clock.now()
    batch = await service.repo.create(G1, Cut(g1[0], g1[-1], 12, 100), "t", now, max_open=2)
    assert batch is not None
    # never two open batches in one chat, whatever the limit
    assert await service.repo.create(G1, Cut(g1[0], g1[-1], 12, 100), "u", now, max_open=9) is None
    second = await service.repo.create(G2, Cut(g2[0], g2[-1], 12, 100), "v", now, max_open=2)
    assert second is not None
    assert (
        await service.repo.create("group:3", Cut(g3[0], g3[-1], 12, 1), "w", now, max_open=2)
        is None
    )
    llm.push(ack_nothing)
    assert await service.run_once() is None  # two open (the default limit): blocked
    assert "still open" in service.last_skip
    assert "2 open at once is the limit" in service.last_skip
    await service.repo.fail(second.id, "test", now)
    report = await run_batch(service)  # G1 stays open; G2 failed once and steps back
    assert report.scope == "group:3"
    assert (await service.repo.batch(batch.id)).state == "queued"


async def test_three_failures_in_a_row_alert_and_success_recovers(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM, sink: RecordingAlertSink
) -> None:
    ids = await seed(core, n=12)
    llm.push(text_response("a"), text_response("b"))
    for _ in range(2):
        report = await run_batch(service, force=True)
        assert report.state == "failed"
    assert sink.fired == []
    llm.push(text_response("c"))
    third = await run_batch(service, force=True)
    assert third.consecutive_failures == 3
    assert [key for key, _ in sink.fired] == [f"consolidation:{G1}"]
    assert "3 consolidation batches failed" in sink.fired[0][1]
    llm.push(ack_nothing)
    done = await run_batch(service, force=True)
    assert done.state == "done"
    assert [key for key, _ in sink.recovered] == [f"consolidation:{G1}"]
    assert (await service.repo.cursor(G1)).acked_id == ids[-1]


async def test_watchdog_fails_a_batch_without_progress(
    core: Yuji, service: ConsolidationService, sink: RecordingAlertSink, clock: FakeClock
) -> None:
    ids = await seed(core, n=12)
    batch = await service.repo.create(G1, Cut(ids[0], ids[-1], 12, 100), "t", clock.now())
    assert batch is not None
    await service.repo.delivered(batch.id, clock.now())
    clock.advance(timedelta(minutes=9))
    assert await service.watchdog() == []
    assert await service.repo.touch(batch.id, clock.now())
    clock.advance(timedelta(minutes=10, seconds=1))
    (killed,) = await service.watchdog()
    assert killed.id == batch.id
    assert killed.state == "failed"
    assert "watchdog" in (killed.error or "")
    cursor = await service.repo.cursor(G1)
    assert (cursor.delivered_id, cursor.acked_id) == (0, 0)
    assert [k for k, _ in sink.fired] == [f"consolidation-watchdog:{G1}"]
    assert not await service.repo.touch(batch.id, clock.now())


async def test_watchdog_cancels_a_hung_batch_in_this_process(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM, clock: FakeClock
) -> None:
    await seed(core, n=12)
    entered = asyncio.Event()

    async def hang(request: LLMRequest) -> ChatResponse:
        entered.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    llm.push(hang)
    running = asyncio.create_task(service.run_once())
    await asyncio.wait_for(entered.wait(), 5)
    clock.advance(timedelta(minutes=11))
    (killed,) = await service.watchdog()
    report = await asyncio.wait_for(running, 5)
    assert report is not None
    assert report.state == "failed"
    assert report.batch_id == killed.id
    assert (await service.repo.batch(killed.id)).state == "failed"
    llm.push(ack_nothing)
    again = await run_batch(service)
    assert (again.state, again.attempts) == ("done", 2)


async def test_reconcile_pulls_watermarks_back_to_the_truth(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM, clock: FakeClock
) -> None:
    ids = await seed(core, n=30)
    llm.push(ack_nothing)
    done = await run_batch(service)
    assert done.last_id == ids[-1]
    more = await seed(core, n=12, start=100)
    batch = await service.repo.create(G1, Cut(more[0], more[-1], 12, 100), "t", clock.now())
    assert batch is not None
    await service.repo.delivered(batch.id, clock.now())
    # A bug (or an old version) pushed acked past the last acknowledged batch:
    async with core.db.write() as conn:
        await conn.execute(
            update(consolidation_cursors)
            .where(consolidation_cursors.c.scope == G1)
            .values(acked_id=more[5])
        )
    report = await service.reconcile()
    assert [b.id for b in report.failed] == [batch.id]
    (fix,) = report.fixes
    assert fix.acked == (more[5], ids[-1])
    assert fix.delivered == (more[-1], ids[-1])
    cursor = await service.repo.cursor(G1)
    assert (cursor.acked_id, cursor.delivered_id) == (ids[-1], ids[-1])
    assert (await service.reconcile()) == type(report)((), ())
    async with core.db.read() as conn:
        states = (await conn.execute(text("SELECT state FROM consolidation_batches"))).scalars()
        assert sorted(states) == ["done", "failed"]
    _ = consolidation_batches


async def test_real_client_rides_out_429_and_500(
    core: Yuji, openai_server: FakeOpenAIServer, sink: RecordingAlertSink, settings: Settings
) -> None:
    ids = await seed(core, n=12)
    configured = settings.with_changes(
        llm_base_url=openai_server.base_url, llm_model="fake-model", llm_max_retries=3
    )
    client = OpenAICompatibleClient(configured, backoff_base_s=0.001)
    service = ConsolidationService(
        core.db, LiveSettings(configured), core.clock, archive=core.archive,
        memories=core.memories,
        llm=client, alerts=sink,
    )  # fmt: skip

    def answer(body: dict[str, object]) -> Reply | None:
        messages = body["messages"]
        assert isinstance(messages, list)
        if len(openai_server.requests) <= 2:
            return Reply.error(429 if len(openai_server.requests) == 1 else 500)
        user = str(messages[1]["content"])  # type: ignore[index]
        tok = user.split("token：", 1)[1].split("\n", 1)[0]
        return Reply.tools(
            (
                "write_memory",
                {
                    "token": tok,
                    "type": "event",
                    "subject": "张三",
                    "content": "张三今天打了羽毛球",
                    "evidence": [ids[0]],
                },
            ),
            ("acknowledge", {"token": tok, "outcome": "extracted", "summary": "羽毛球"}),
        )

    openai_server.handler = answer
    try:
        report = await run_batch(service)
    finally:
        await client.aclose()
    assert report.state == "done"
    assert len(report.written) == 1
    assert len(openai_server.requests) == 3
    assert openai_server.requests[-1].body["tools"][0]["function"]["name"] == "search_memories"
    assert (await service.repo.cursor(G1)).acked_id == ids[-1]


async def test_a_failing_chat_lets_the_others_go_first(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM, clock: FakeClock
) -> None:
    await seed(core, G1, n=12)
    clock.advance(timedelta(minutes=5))
    await seed(core, G2, n=12)
    llm.push(text_response("聊天而已"), ack_nothing, ack_nothing)
    first = await run_batch(service)
    second = await run_batch(service)
    third = await run_batch(service)
    assert [(r.scope, r.state) for r in (first, second, third)] == [
        (G1, "failed"),
        (G2, "done"),
        (G1, "done"),
    ]
    assert (await service.repo.pending(G1))[0].failures == 0


async def test_a_batch_that_would_skip_unacknowledged_messages_is_never_acknowledged(
    core: Yuji, service: ConsolidationService, clock: FakeClock
) -> None:
    ids = await seed(core, n=12)
    # A range latched from a stale watermark (another process moved `acked` back
    # in between): messages ids[0..3] are unacknowledged and not in the batch.
    async with core.db.write() as conn:
        await conn.execute(
            consolidation_cursors.insert().values(
                scope=G1, acked_id=ids[3], delivered_id=ids[3], updated_at=clock.now()
            )
        )
    batch = await service.repo.create(G1, Cut(ids[4], ids[-1], 8, 80), "t", clock.now())
    assert batch is not None
    await service.repo.delivered(batch.id, clock.now())
    async with core.db.write() as conn:
        await conn.execute(
            update(consolidation_cursors)
            .where(consolidation_cursors.c.scope == G1)
            .values(acked_id=0, delivered_id=0)
        )
    with pytest.raises(BatchError):
        await service.repo.acknowledge(batch.id, "t", "nothing", "", clock.now())
    assert (await service.repo.cursor(G1)).acked_id == 0
    await service.repo.fail(batch.id, "stale range", clock.now())
    with pytest.raises(BatchError):
        await service.repo.create(G1, Cut(ids[4], ids[-1], 8, 80), "u", clock.now())


async def test_pending_of_one_chat_counts_only_that_chat(
    core: Yuji, service: ConsolidationService
) -> None:
    await seed(core, G1, n=3)
    await seed(core, G2, n=5)
    assert [(p.scope, p.count) for p in await service.repo.pending(G2)] == [(G2, 5)]
    assert [(p.scope, p.count) for p in await service.repo.pending()] == [(G1, 3), (G2, 5)]
    assert await service.repo.pending("group:9") == []
