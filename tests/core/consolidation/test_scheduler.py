"""The scheduler on a simulated clock: keeping up, order, concurrency, budget, lag alerts.

Model turns take simulated seconds (`SimTime`); nothing here waits on the wall clock
beyond the database's own round trips."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from datetime import timedelta

import pytest

from memory_core import FakeClock, Yuji
from memory_core.consolidation.runner import BatchReport
from memory_core.consolidation.selection import Cut
from memory_core.consolidation.service import ConsolidationService, retry_after_s, wait_event
from memory_core.errors import StaleBatchRange
from memory_core.llm import LLMRequest, ScriptedLLM, text_response
from memory_core.llm.base import ChatResponse
from memory_core.llm.metered import MeteredLLM
from memory_core.ops.alerts import RecordingAlertSink
from memory_core.storage import Batch
from memory_core.storage.ops.usage_repo import UsageRepo, UsageRow
from tests.fakes.simtime import SimTime

from .conftest import G1, G2, ack_nothing, seed

G3, G4 = "group:3", "group:4"


@pytest.fixture
def sim(clock: FakeClock) -> SimTime:
    return SimTime(clock)


@pytest.fixture
def service(core: Yuji, llm: ScriptedLLM, sink: RecordingAlertSink) -> ConsolidationService:
    """Metered like the bot's model: every turn is an `llm_usage` row the budget reads."""
    metered = MeteredLLM(
        llm, job="consolidation", model="fake", sink=UsageRepo(core.db), clock=core.clock
    )
    service = ConsolidationService(
        core.db,
        core.live,
        core.clock,
        archive=core.archive,
        memories=core.memories,
        llm=metered,
        alerts=sink,
    )
    core.archive.writer.on_commit.append(service.wake.set)
    return service


@contextlib.asynccontextmanager
async def scheduling(service: ConsolidationService, sim: SimTime) -> AsyncGenerator[None]:
    task = asyncio.create_task(service.run(sim.wait))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def actors(service: ConsolidationService) -> Callable[[], int]:
    """The scheduler loop plus each batch it runs (parked in its model turn)."""
    return lambda: 1 + service.in_flight


def acking(
    sim: SimTime,
    *,
    turn_s: float = 3.0,
    tokens: int = 0,
    seen: list[str] | None = None,
    during: Callable[[LLMRequest], object] | None = None,
) -> Callable[[LLMRequest], Awaitable[ChatResponse]]:
    async def answer(request: LLMRequest) -> ChatResponse:
        if seen is not None:
            seen.append(request.scope or "")
        if during is not None:
            result = during(request)
            if asyncio.iscoroutine(result):
                await result
        await sim.sleep(turn_s)
        response = ack_nothing(request)
        usage = {"prompt_tokens": tokens, "completion_tokens": 0}
        return ChatResponse(response.message, response.finish_reason, usage)

    return answer


async def unread(service: ConsolidationService, scope: str) -> int:
    return (await service.repo.backlog(scope)).messages


async def test_on_the_defaults_1800_new_messages_in_four_groups_are_consolidated_in_six_minutes(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM, sim: SimTime, clock: FakeClock
) -> None:
    for scope in (G1, G2, G3, G4):
        await seed(core, scope, n=450)
    llm.default = acking(sim, turn_s=3.0, tokens=3000)
    start = clock.now()
    async with scheduling(service, sim):
        await sim.advance(start + timedelta(minutes=6), actors(service))
    for scope in (G1, G2, G3, G4):
        assert await unread(service, scope) < 12, scope
    assert clock.now() - start <= timedelta(minutes=6)


async def test_at_most_the_concurrency_limit_and_never_two_open_batches_in_one_chat(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM, sim: SimTime, clock: FakeClock
) -> None:
    scopes = [f"group:{i}" for i in range(1, 6)]
    for scope in scopes:
        await seed(core, scope, n=400)
    seen_open: list[list[str]] = []

    async def look(request: LLMRequest) -> None:
        seen_open.append([b.scope for b in await service.repo.open_batches()])

    llm.default = acking(sim, turn_s=5.0, during=look)
    async with scheduling(service, sim):
        await sim.advance(clock.now() + timedelta(seconds=30), actors(service))
        assert max(len(s) for s in seen_open) == 2  # the default
        core.live.current = core.settings.with_changes(consolidation_concurrency=3)
        service.wake.set()
        await sim.advance(clock.now() + timedelta(minutes=10), actors(service))
    assert max(len(s) for s in seen_open) == 3
    assert all(len(s) == len(set(s)) for s in seen_open)  # one open batch per chat
    for scope in scopes:
        assert await unread(service, scope) == 0


async def test_chats_that_woke_the_bot_this_week_go_first_then_the_oldest_silent_backlog(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM, sim: SimTime, clock: FakeClock
) -> None:
    core.live.current = core.settings.with_changes(consolidation_concurrency=1)
    await seed(core, "group:dead", n=12)  # the oldest backlog, never woke the bot
    clock.advance(timedelta(minutes=10))
    await seed(core, "group:stale", n=12)  # woke it, but 8 days ago
    clock.advance(timedelta(minutes=10))
    await seed(core, "group:live", n=12)
    clock.advance(timedelta(minutes=10))
    await seed(core, "group:live2", n=12)
    await core.chat_state.touch("group:stale", clock.now(), wake_at=clock.now() - timedelta(days=8))
    await core.chat_state.touch("group:live", clock.now(), wake_at=clock.now() - timedelta(days=6))
    await core.chat_state.touch("group:live2", clock.now(), wake_at=clock.now())
    seen: list[str] = []
    llm.default = acking(sim, seen=seen)
    async with scheduling(service, sim):
        await sim.advance(clock.now() + timedelta(minutes=5), actors(service))
    assert seen == ["group:live", "group:live2", "group:dead", "group:stale"]


async def test_the_budget_counts_consolidation_tokens_of_llm_usage_per_hour_and_per_day(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM, sim: SimTime, clock: FakeClock
) -> None:
    core.live.current = core.settings.with_changes(
        consolidation_concurrency=1,
        consolidation_tokens_per_hour=10_000,
        consolidation_tokens_per_day=20_000,
    )
    usage = UsageRepo(core.db)
    # Other jobs' tokens are not consolidation's budget.
    await usage.record(UsageRow(clock.now(), "chat", "m", G1, 10**7, 0, 0, 1, "ok"))
    await seed(core, G1, n=40 * 12)
    llm.default = acking(sim, tokens=3000)
    start = clock.now()
    async with scheduling(service, sim):
        await sim.advance(start + timedelta(minutes=50), actors(service))
        # 3 batches = 9,000 < 10,000: a 4th starts; at 12,000 the hour is spent.
        assert service.started == 4
        assert "hourly token budget spent (12000 of 10000)" in service.last_skip
        await sim.advance(start + timedelta(minutes=70), actors(service))
        # the first hour's tokens left the window: 4 more, then the day (21,000) is spent
        assert service.started == 7
        assert "daily token budget spent (21000 of 20000)" in service.last_skip
        await sim.advance(start + timedelta(hours=3), actors(service))
        assert service.started == 7  # the day's budget holds after the hour's frees
    rows = await usage.totals(start - timedelta(seconds=1))
    assert {t.job: t.tokens for t in rows}["consolidation"] >= 21_000


async def test_lag_past_the_limit_alerts_once_per_chat_marks_nothing_read_and_recovers(
    core: Yuji,
    service: ConsolidationService,
    llm: ScriptedLLM,
    sim: SimTime,
    clock: FakeClock,
    sink: RecordingAlertSink,
) -> None:
    core.live.current = core.settings.with_changes(
        consolidation_tokens_per_hour=1, consolidation_concurrency=1
    )
    await UsageRepo(core.db).record(
        UsageRow(clock.now(), "consolidation", "m", G1, 5, 0, 0, 1, "ok")
    )
    await seed(core, G1, n=400)
    await seed(core, G2, n=3)
    llm.default = acking(sim, tokens=100)
    async with scheduling(service, sim):
        await sim.advance(clock.now() + timedelta(minutes=50), actors(service))
        assert service.started == 0  # the hour's budget is spent
        await sim.advance(clock.now() + timedelta(hours=7), actors(service))
        # a batch an hour gets through (each spends the hour's budget): lag passes 6 h
        assert 5 <= service.started <= 8
        lagging = [k for k, _ in sink.fired if k.startswith("consolidation-lag:")]
        assert sorted(lagging) == [f"consolidation-lag:{G1}", f"consolidation-lag:{G2}"]
        assert len(lagging) == len(set(lagging))  # once per chat
        for scope in (G1, G2):
            cursor = await service.repo.cursor(scope)
            done = [b for b in await service.repo.batches(scope) if b.state == "done"]
            assert cursor.acked_id == max((b.last_id for b in done), default=0)  # nothing faked
        core.live.current = core.settings.with_changes(consolidation_tokens_per_hour=0)
        service.wake.set()
        await sim.advance(clock.now() + timedelta(hours=3), actors(service))
    assert await unread(service, G1) == 0
    recovered = {k for k, _ in sink.recovered if k.startswith("consolidation-lag:")}
    assert recovered == set(lagging)


async def test_a_failing_chat_backs_off_while_the_others_go_on(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM, sim: SimTime, clock: FakeClock
) -> None:
    await seed(core, G1, n=12)
    clock.advance(timedelta(minutes=1))
    await seed(core, G2, n=60)
    seen: list[str] = []
    ok = acking(sim, seen=seen)

    async def answer(request: LLMRequest) -> ChatResponse:
        if request.scope == G1 and seen.count(G1) < 2:
            seen.append(G1)
            await sim.sleep(3)
            return text_response("聊天而已")  # no acknowledgement: the batch fails
        return await ok(request)

    llm.default = answer
    start = clock.now()
    async with scheduling(service, sim):
        await sim.advance(start + timedelta(seconds=50), actors(service))
        assert seen.count(G1) == 1  # failed once, waits retry_after_s(1) = 60 s
        assert await unread(service, G2) < 12  # the other chat went on meanwhile
        await sim.advance(start + timedelta(minutes=10), actors(service))
    assert retry_after_s(1) == 60
    assert retry_after_s(2) == 120
    assert retry_after_s(99) == 3600
    assert await unread(service, G1) == 0


async def test_wall_clock_wait_ends_on_a_cancel_that_meets_a_set_event() -> None:
    """A cancel arriving as the event is set still ends the sleeper (the shutdown of a
    scheduler that a last tick had just woken hung on this)."""
    for _ in range(20):
        event = asyncio.Event()
        sleeper = asyncio.create_task(wait_event(event, 600.0))
        await asyncio.sleep(0)  # the sleeper waits on the event
        event.set()
        sleeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(sleeper, 5.0)
        assert sleeper.cancelled()


async def test_a_closed_scheduler_is_not_started_again(service: ConsolidationService) -> None:
    assert service.start() is not None
    await service.aclose()
    assert service.start() is None


async def test_a_batch_ending_during_a_pass_leaves_its_chat_to_the_next_pass_not_the_pass_failed(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM, clock: FakeClock
) -> None:
    """The pass reads every chat's cursor first; a batch of this process acknowledged
    before the pass plans (here: while it lists the open batches) moves G1's cursor past
    that reading. G1 waits for the next pass; G2's batch, latched first, still runs (the
    pass used to fail with "batch range 1 starts at or before acked", leaving it queued
    with nothing to run it until the watchdog failed it)."""
    await seed(core, G2, n=15)
    clock.advance(timedelta(minutes=1))
    g1 = await seed(core, G1, n=15)
    clock.advance(timedelta(hours=1))
    llm.default = ack_nothing
    listing = service.repo.open_batches
    ended: list[BatchReport | None] = []

    async def open_batches() -> list[Batch]:
        if not ended:
            ended.append(None)
            ended[0] = await service.run_once(scope=G1)  # acknowledged meanwhile
            await seed(core, G1, n=15, start=15)
        return await listing()

    service.repo.open_batches = open_batches  # type: ignore[method-assign]
    await service.start_due()
    while service.in_flight:  # a batch that ends sets `wake`
        service.wake.clear()
        await service.wake.wait()
    assert ended[0] is not None
    assert ended[0].outcome == "nothing"
    done = await service.repo.batches(G2)
    assert [b.state for b in done] == ["done"]
    assert await unread(service, G1) == 15  # the new ones, for the next pass
    with pytest.raises(StaleBatchRange):  # what the pass met, planned from the old cursor
        await service.repo.create(G1, Cut(g1[0], g1[-1], 15, 100), "t", clock.now())
