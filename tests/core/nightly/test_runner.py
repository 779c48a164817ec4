"""Checkpoints, resumption, catch-up, retries and the circuit breaker."""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import text

from memory_core import FakeClock, Settings, Yuji
from memory_core.errors import StorageError, ValidationError
from memory_core.llm.base import ChatResponse
from memory_core.llm.fake import LLMRequest, ScriptedLLM, text_response
from memory_core.nightly import StepReport
from memory_core.ops.alerts import RecordingAlertSink
from memory_core.storage.nightly.nightly_health_repo import ScopeHealth

from .seed import SCOPE, day_script, fragment, prompt_kind, quiet_day, quiet_responder, reply, sh

DAY = "2026-11-20"
STEPS = ["settle", "diary", "cards", "people", "states", "events", "followups", "gc"]


class Crash(BaseException):
    """The process dies: nothing below catches this."""


def crash(_: LLMRequest) -> ChatResponse:
    raise Crash


def outcomes(reports: list[StepReport], scope: str = SCOPE) -> list[tuple[str, str, str]]:
    return [(r.day, r.step, r.outcome) for r in reports if r.scope == scope]


async def test_a_full_night_runs_the_steps_in_order(core: Yuji, llm: ScriptedLLM) -> None:
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "南杉说出差回来了。")
    llm.push(*day_script())

    reports = await core.nightly.run(scope=SCOPE)

    assert [(s, o) for _, s, o in outcomes(reports)] == [
        ("settle", "skipped"),
        ("diary", "done"),
        ("cards", "done"),
        ("people", "skipped"),
        ("states", "done"),
        ("events", "done"),
        ("followups", "skipped"),
        ("gc", "skipped"),
    ]
    assert {r.day for r in reports if r.scope == SCOPE} == {DAY}
    last = await core.nightly.last_run(SCOPE)
    assert last.day == DAY
    assert [(s.step, s.state) for s in last.steps] == [(s, "done") for s in STEPS]
    assert (last.consecutive_failures, last.circuit_open, last.retry_at) == (0, False, None)


async def test_resume_after_a_crash_between_diary_and_cards(core: Yuji, llm: ScriptedLLM) -> None:
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "小白说喜欢猫。")
    script = day_script(changes=[{"kind": "preferences", "action": "add", "text": "小白喜欢猫"}])
    llm.push(script[0], crash)

    with pytest.raises(Crash):
        await core.nightly.run(scope=SCOPE)

    states = {s.step: s.state for s in (await core.nightly.last_run(SCOPE)).steps}
    assert states == {"settle": "done", "diary": "done", "cards": "running"}
    llm.push(*script[1:])

    reports = await core.nightly.run(scope=SCOPE)

    assert outcomes(reports)[:3] == [
        (DAY, "settle", "kept"),
        (DAY, "diary", "kept"),
        (DAY, "cards", "done"),
    ]
    async with core.db.read() as conn:
        diaries = (await conn.execute(text("SELECT count(*) FROM diaries"))).scalar()
        versions = (await conn.execute(text("SELECT kind, version FROM cards"))).all()
    assert diaries == 1
    assert [tuple(v) for v in versions] == [("preferences", 1)]
    prompts = [r.messages[0].content or "" for r in llm.requests]
    assert sum("《今日小传》" in p for p in prompts) == 1


async def test_a_crash_inside_cards_reuses_the_saved_reply_and_writes_once(
    core: Yuji, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    await fragment(core, SCOPE, sh(2026, 11, 19, 21, 0), "小白说喜欢清淡。")
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "小白说改吃辣了。")
    llm.push(*day_script(changes=[{"kind": "preferences", "action": "add", "text": "喜欢清淡"}]))
    await core.nightly.run(day="2026-11-19", scope=SCOPE)
    conflict = {
        "kind": "preferences",
        "action": "conflict",
        "text": "改吃辣了",
        "replaces": "喜欢清淡",
        "old_past_tense": "以前喜欢清淡",
    }
    llm.push(*day_script(changes=[conflict]))
    repo = core.nightly.repo
    real_write_cards = repo.write_cards

    async def dies(*args: object, **kwargs: object) -> None:
        raise Crash

    monkeypatch.setattr(repo, "write_cards", dies)
    with pytest.raises(Crash):
        await core.nightly.run(day=DAY, scope=SCOPE)
    monkeypatch.setattr(repo, "write_cards", real_write_cards)
    asked = len(llm.requests)

    await core.nightly.run(day=DAY, scope=SCOPE)

    cards_prompts = [
        r for r in llm.requests[asked:] if "七张记忆卡片" in (r.messages[0].content or "")
    ]
    assert cards_prompts == []
    history = await core.nightly.card_history(SCOPE, "preferences")
    assert [(c.version, c.content) for c in history] == [(1, "喜欢清淡"), (2, "改吃辣了")]
    kept = await core.memories.newest(SCOPE, types=["state"])
    assert [m.content for m in kept] == ["以前喜欢清淡"]


async def test_catch_up_of_three_missed_days_in_order(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock
) -> None:
    clock.set(sh(2026, 11, 18, 4, 0))
    assert outcomes(await core.nightly.run(scope=SCOPE))[-1] == ("2026-11-17", "gc", "skipped")
    ids = [
        await fragment(core, SCOPE, sh(2026, 11, d, 22, 0), f"第{d}天的事。") for d in (18, 19, 20)
    ]
    clock.set(sh(2026, 11, 21, 4, 0))  # three nights missed
    for d in (18, 19, 20):
        llm.push(*day_script(diary=f"{d}日小传"))

    reports = await core.nightly.run()

    days = [day for day, step, _ in outcomes(reports) if step == "gc"]
    assert days == ["2026-11-18", "2026-11-19", "2026-11-20"]
    for d, fid in zip((18, 19, 20), ids, strict=True):
        diary = await core.nightly.diary(SCOPE, f"2026-11-{d}")
        assert diary is not None
        assert (diary.content, diary.fragment_ids) == (f"{d}日小传", (fid,))
    assert reports[-1].scope == "*"


async def test_retry_after_two_hours_then_the_circuit_opens_and_heals(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock, sink: RecordingAlertSink
) -> None:
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "南杉说出差回来了。")
    llm.default = text_response("作为一个AI，我不能写日记。")

    first = await core.nightly.run(trigger="schedule")
    assert ("2026-11-20", "diary", "failed") in outcomes(first)
    health = await core.nightly.last_run(SCOPE)
    assert health.consecutive_failures == 1
    assert health.retry_at == clock.now() + timedelta(hours=2)

    clock.advance(timedelta(hours=1, minutes=59))
    assert await core.nightly.retry_due() == []
    clock.advance(timedelta(minutes=1))
    second = await core.nightly.retry_due()
    assert outcomes(second)[-1] == (DAY, "diary", "failed")
    assert outcomes(second)[0] == (DAY, "settle", "kept")
    assert (await core.nightly.last_run(SCOPE)).consecutive_failures == 2
    assert sink.fired == []

    clock.advance(timedelta(hours=2))
    await core.nightly.retry_due()
    health = await core.nightly.last_run(SCOPE)
    assert (health.consecutive_failures, health.circuit_open, health.retry_at) == (3, True, None)
    assert len(sink.fired) == 1
    key, message = sink.fired[0]
    assert key == f"nightly:{SCOPE}"
    assert "连续失败 3 次" in message

    asked = len(llm.requests)
    clock.advance(timedelta(hours=2))
    assert await core.nightly.retry_due() == []
    assert len(llm.requests) == asked  # retries stopped

    # The next scheduled night tries once more (half-open) and fails quietly...
    clock.set(sh(2026, 11, 22, 4, 0))
    await core.nightly.run(trigger="schedule")
    assert (await core.nightly.last_run(SCOPE)).consecutive_failures == 4
    assert len(sink.fired) == 1
    # ...and the first success closes the circuit and says so.
    llm.default = None
    llm.push(*day_script(), *day_script(diary="第二天"))
    clock.set(sh(2026, 11, 23, 4, 0))
    healed = await core.nightly.run(trigger="schedule")
    assert [d for d, s, _ in outcomes(healed) if s == "gc"] == [
        "2026-11-20",
        "2026-11-21",
        "2026-11-22",
    ]
    health = await core.nightly.last_run(SCOPE)
    assert (health.consecutive_failures, health.circuit_open, health.retry_at) == (0, False, None)
    assert health.last_success_at == clock.now()
    assert [k for k, _ in sink.recovered] == [f"nightly:{SCOPE}"]


async def test_each_chat_fails_on_its_own(core: Yuji, llm: ScriptedLLM) -> None:
    other = "group:200"
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "甲群的事。")
    await fragment(core, other, sh(2026, 11, 20, 21, 0), "乙群的事。")

    def answer(request: LLMRequest) -> ChatResponse:
        if "甲群" in (request.messages[1].content or ""):
            return text_response("抱歉，我无法处理")
        return reply(quiet_day(prompt_kind(request.messages[0].content or "")))

    llm.default = answer

    reports = await core.nightly.run()

    assert (DAY, "gc", "skipped") in outcomes(reports, other)
    assert await core.nightly.diary(other, DAY) is not None
    assert (DAY, "diary", "failed") in outcomes(reports, SCOPE)
    assert (await core.nightly.last_run(other)).consecutive_failures == 0
    assert (await core.nightly.last_run(SCOPE)).consecutive_failures == 1


async def test_without_a_model_steps_with_material_wait_and_nothing_counts_as_failure(
    settings: Settings, clock: FakeClock
) -> None:
    opened = await Yuji.open(settings, clock=clock)
    try:
        assert opened.llm is None
        await fragment(opened, SCOPE, sh(2026, 11, 20, 21, 0), "南杉说出差回来了。")
        reports = await opened.nightly.run(scope=SCOPE)
        assert outcomes(reports) == [(DAY, "settle", "skipped"), (DAY, "diary", "waiting")]
        last = await opened.nightly.last_run(SCOPE)
        assert {s.step: s.state for s in last.steps}["diary"] == "pending"
        assert (last.consecutive_failures, last.retry_at) == (0, None)
    finally:
        await opened.close()


async def test_a_day_that_has_not_ended_is_refused(core: Yuji) -> None:
    with pytest.raises(ValidationError, match="not ended"):
        await core.nightly.run(day="2026-11-21", scope=SCOPE)


async def test_a_finished_day_run_again_is_kept_without_asking(
    core: Yuji, llm: ScriptedLLM
) -> None:
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "南杉说出差回来了。")
    llm.push(*day_script())
    await core.nightly.run(scope=SCOPE)
    asked = len(llm.requests)

    again = await core.nightly.run(day=DAY, scope=SCOPE)

    assert {o for _, _, o in outcomes(again)} == {"kept"}
    assert len(llm.requests) == asked


async def test_cards_never_lose_a_previous_version(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock
) -> None:
    texts = ["喜欢猫", "也喜欢狗", "最近迷上了鹦鹉"]
    for i, line in enumerate(texts):
        day = 18 + i
        await fragment(core, SCOPE, sh(2026, 11, day, 21, 0), line)
        clock.set(sh(2026, 11, day + 1, 4, 0))
        llm.push(*day_script(changes=[{"kind": "preferences", "action": "add", "text": line}]))
        await core.nightly.run(scope=SCOPE)

    history = await core.nightly.card_history(SCOPE, "preferences")
    assert [(c.version, c.content, c.day) for c in history] == [
        (1, "喜欢猫", "2026-11-18"),
        (2, "喜欢猫\n也喜欢狗", "2026-11-19"),
        (3, "喜欢猫\n也喜欢狗\n最近迷上了鹦鹉", "2026-11-20"),
    ]
    for statement in ("UPDATE cards SET content = 'x'", "DELETE FROM cards"):
        with pytest.raises(Exception, match="append-only"):
            async with core.db.write() as conn:
                await conn.execute(text(statement))
    assert len(await core.nightly.card_history(SCOPE, "preferences")) == 3


async def test_housekeeping_optimizes_the_index_and_leaves_the_logs_to_their_sink(
    core: Yuji, settings: Settings, clock: FakeClock
) -> None:
    logs = settings.logs_dir
    logs.mkdir(parents=True, exist_ok=True)
    old = logs / "yuji_2026-11-01.log"
    old.write_text("x")
    stamp = (clock.now() - timedelta(days=30)).timestamp()
    os.utime(old, (stamp, stamp))

    reports = await core.nightly.run(scope=SCOPE)

    assert reports[-1].scope == "*"
    assert "optimized memory_fts" in reports[-1].detail
    assert os.listdir(logs) == [old.name]


async def test_a_due_retry_with_nothing_left_to_do_closes_the_streak(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock
) -> None:
    llm.default = quiet_responder
    await core.nightly.run(scope=SCOPE)  # the 20th is done
    await fragment(core, SCOPE, sh(2026, 11, 19, 21, 0), "补进来的前一天。")
    llm.default = text_response("抱歉，我无法处理")
    failed = await core.nightly.run(day="2026-11-19", scope=SCOPE)  # by hand, fails
    assert ("2026-11-19", "diary", "failed") in outcomes(failed)
    assert (await core.nightly.last_run(SCOPE)).consecutive_failures == 1
    clock.advance(timedelta(hours=2))

    retried = await core.nightly.retry_due()

    assert outcomes(retried) == []  # every day up to the cutoff is finished
    last = await core.nightly.last_run(SCOPE)
    assert (last.consecutive_failures, last.retry_at) == (0, None)
    assert await core.nightly.retry_due() == []


async def test_a_step_another_process_is_running_is_left_alone_until_its_lease_ends(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock, settings: Settings
) -> None:
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "小白说喜欢猫。")
    script = day_script(changes=[{"kind": "preferences", "action": "add", "text": "小白喜欢猫"}])
    other_llm = ScriptedLLM([script[0], crash])
    other = await Yuji.open(settings, clock=clock, llm=other_llm)  # e.g. `yuji nightly`
    try:
        with pytest.raises(Crash):
            await other.nightly.run(scope=SCOPE)  # still "running" cards, as far as we know
    finally:
        await other.close()
    llm.push(*script[1:])

    busy = await core.nightly.run(scope=SCOPE)

    assert outcomes(busy)[-1][1:] == ("cards", "blocked")
    assert "another process" in busy[-1].detail
    assert llm.requests == []
    assert (await core.nightly.last_run(SCOPE)).consecutive_failures == 0
    clock.advance(timedelta(minutes=31))

    resumed = await core.nightly.run(scope=SCOPE)

    assert outcomes(resumed)[2] == (DAY, "cards", "done")
    assert [c.content for c in await core.nightly.cards(SCOPE)] == ["小白喜欢猫"]


async def test_a_failure_half_way_through_events_never_writes_an_event_twice(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    f1 = await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "小白约南杉周六爬山。")
    f2 = await fragment(core, SCOPE, sh(2026, 11, 20, 22, 0), "南杉说下周搬家。")
    events = [
        {"subject": "小白", "content": "小白约南杉周六爬山", "fragment_ids": [f1]},
        {"subject": "南杉", "content": "南杉下周搬家", "fragment_ids": [f2]},
    ]
    llm.push(*day_script(events=events))
    real_write = core.memories.write
    calls = 0

    async def flaky(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:  # the store hiccups on the second event
            raise StorageError("database is locked")
        return await real_write(*args, **kwargs)

    monkeypatch.setattr(core.memories, "write", flaky)
    first = await core.nightly.run(trigger="schedule")
    assert outcomes(first)[-1] == (DAY, "events", "failed")
    llm.push(reply({"events": events}))  # asked again, the model would say the same

    clock.advance(timedelta(hours=2))
    retried = await core.nightly.retry_due()

    assert (DAY, "events", "done") in outcomes(retried)
    kept = sorted(m.content for m in await core.memories.newest(SCOPE, types=["event"]))
    assert kept == ["南杉下周搬家", "小白约南杉周六爬山"]


async def test_a_storage_error_at_a_checkpoint_fails_that_step_and_counts(
    core: Yuji, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "南杉说出差回来了。")
    llm.push(*day_script())
    repo = core.nightly.repo
    real_begin = repo.begin_step

    async def begin_step(scope: str, day: str, step: str, *args: Any) -> None:
        if step == "cards":
            raise StorageError("database is locked")
        await real_begin(scope, day, step, *args)

    async def fail_step(*_: Any) -> None:
        raise StorageError("disk I/O error")

    monkeypatch.setattr(repo, "begin_step", begin_step)
    monkeypatch.setattr(repo, "fail_step", fail_step)

    reports = await core.nightly.run(scope=SCOPE)

    assert outcomes(reports)[-1] == (DAY, "cards", "failed")
    assert "database is locked" in reports[-1].detail
    assert (await core.nightly.last_run(SCOPE)).consecutive_failures == 1


async def test_a_circuit_closed_while_the_night_runs_is_counted_from(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The streak is reset (the console closing the circuit) while a night runs and
    fails: the failure counts from the reset (1, circuit closed), not from the streak
    read when the run began (2 + 1 = 3, which would open the circuit)."""
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "南杉说出差回来了。")
    llm.default = text_response("作为一个AI，我不能写日记。")
    await core.nightly.health.save(ScopeHealth(SCOPE, consecutive_failures=2), clock.now())
    real_steps = core.nightly.repo.steps
    reset: list[bool] = []

    async def steps_after_a_reset(*args: Any, **kwargs: Any) -> Any:
        if not reset:
            reset.append(True)
            await core.nightly.health.save(ScopeHealth(SCOPE), clock.now())
        return await real_steps(*args, **kwargs)

    monkeypatch.setattr(core.nightly.repo, "steps", steps_after_a_reset)
    reports = await core.nightly.run(trigger="schedule")
    assert reset
    assert (DAY, "diary", "failed") in outcomes(reports)
    health = await core.nightly.last_run(SCOPE)
    assert (health.consecutive_failures, health.circuit_open) == (1, False)
