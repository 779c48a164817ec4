"""The nightly steps and the follow-ups agree (#44, item 3), through a real nightly run
with a scripted model: `settle` rewriting a past-due state in place keeps its
follow-up; `states` extending a state moves it; a state resolved early is answered."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import pytest

from memory_core import EvidenceRef, FakeClock, NewExperience, Settings, Yuji
from memory_core.llm.base import ChatResponse
from memory_core.llm.fake import LLMRequest, ScriptedLLM
from tests.core.nightly.seed import fragment, prompt_kind, quiet_day, reply, sh

SCOPE = "group:100"
_fp = itertools.count(1)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(sh(2026, 11, 21, 4, 0))  # the 20th has just ended


@pytest.fixture
def llm() -> ScriptedLLM:
    return ScriptedLLM()


@pytest.fixture
async def core(settings: Settings, clock: FakeClock, llm: ScriptedLLM) -> AsyncIterator[Yuji]:
    opened = await Yuji.open(settings, clock=clock, llm=llm)
    try:
        yield opened
    finally:
        await opened.close()


async def state(core: Yuji, who: str, said: str, content: str, until: datetime) -> int:
    at = sh(2026, 11, 16, 9, 0)
    exp = await core.archive.append(
        NewExperience(SCOPE, f"n{next(_fp)}", who, said, sender_name=f"群友{who}", sent_at=at)
    )
    written = await core.memories.write(
        SCOPE,
        type="state",
        subject=f"群友{who}",
        content=content,
        evidence=[EvidenceRef(experience_id=exp)],
        valid_from=at,
        valid_to=until,
        subject_id=who,
    )
    return written.memory.id


async def states_now(core: Yuji, clock: FakeClock, at: datetime) -> dict[int, str]:
    clock.set(at)
    return {f.memory.id: f.state for f in await core.followups.listing(SCOPE)}


async def test_settle_keeps_it_states_moves_it_and_an_early_end_answers_it(
    core: Yuji, clock: FakeClock, llm: ScriptedLLM
) -> None:
    trip = await state(
        core, "7", "我这周在杭州出差，周五回来", "在杭州出差", sh(2026, 11, 20, 18, 0)
    )
    shenzhen = await state(
        core, "8", "我在深圳出差，25号回来", "在深圳出差", sh(2026, 11, 25, 0, 0)
    )
    course = await state(core, "9", "我在北京培训到28号", "在北京培训", sh(2026, 11, 28, 0, 0))
    await fragment(
        core, SCOPE, sh(2026, 11, 20, 21, 0), "群友8说深圳的出差延期了；群友9说培训提前结束了。"
    )
    changes = [
        {
            "action": "extended",
            "id": shenzhen,
            "quote": "深圳的出差延期了",
            "content": "在深圳出差，延期到27号",
            "until": "2026-11-27",
        },
        {
            "action": "resolved",
            "id": course,
            "quote": "培训提前结束了",
            "content": "在北京培训过，提前结束了",
        },
    ]

    def answer(request: LLMRequest) -> ChatResponse:
        kind = prompt_kind(request.messages[0].content or "")
        by_kind: dict[str, Any] = {
            "settle": {"rewrites": [{"id": trip, "past_tense": "那周在杭州出差（已回来）"}]},
            "diary": {"diary": "群友8说深圳的出差延期了。群友9说北京的培训提前结束了。"},
            "states": {"changes": changes},
        }
        return reply(by_kind.get(kind, quiet_day(kind)))

    llm.default = answer
    before = await states_now(core, clock, sh(2026, 11, 21, 4, 0))
    assert before == {trip: "due", shenzhen: "upcoming", course: "upcoming"}
    clock.set(sh(2026, 11, 21, 4, 0))
    reports = await core.nightly.run(day="2026-11-20", scope=SCOPE)
    assert {r.step: r.outcome for r in reports if r.scope == SCOPE}["states"] == "done"

    settled = await core.memories.get(SCOPE, trip)
    assert (settled.content, settled.version) == ("那周在杭州出差（已回来）", 2)
    after = await states_now(core, clock, sh(2026, 11, 21, 10, 0))
    assert after == {trip: "due", shenzhen: "upcoming", course: "answered"}
    # Extended to the 27th: due from the 28th, not from the 26th.
    assert (await states_now(core, clock, sh(2026, 11, 26, 10, 0)))[shenzhen] == "upcoming"
    assert (await states_now(core, clock, sh(2026, 11, 28, 10, 0)))[shenzhen] == "due"


async def event(core: Yuji, who: str, said: str, content: str, on: datetime) -> int:
    at = sh(2026, 11, 20, 12, 0)
    exp = await core.archive.append(
        NewExperience(SCOPE, f"n{next(_fp)}", who, said, sender_name=f"群友{who}", sent_at=at)
    )
    written = await core.memories.write(
        SCOPE,
        type="event",
        subject=f"群友{who}",
        content=content,
        evidence=[EvidenceRef(experience_id=exp)],
        valid_from=on,
        subject_id=who,
    )
    return written.memory.id


async def test_the_followups_step_drops_what_is_not_worth_asking_citing_why(
    core: Yuji, clock: FakeClock, llm: ScriptedLLM
) -> None:
    hotpot = await event(core, "7", "明天吃火锅去", "群友7 11月21日吃火锅", sh(2026, 11, 21, 0, 0))
    exam = await event(core, "8", "我下周二考四级", "群友8 11月24日考四级", sh(2026, 11, 24, 0, 0))
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "群友7约了吃火锅；群友8要考四级。")
    asked: list[str] = []

    def answer(request: LLMRequest) -> ChatResponse:
        kind = prompt_kind(request.messages[0].content or "")
        if kind != "followups":
            return reply(quiet_day(kind))
        asked.append(request.messages[1].content or "")
        if len(asked) == 1:  # an id not in the list is refused, and asked again
            return reply({"drop": [{"id": exam + 100, "why": "编的"}]})
        return reply({"drop": [{"id": hotpot, "why": "吃火锅是日常小事"}]})

    llm.default = answer
    reports = await core.nightly.run(day="2026-11-20", scope=SCOPE)
    step = next(r for r in reports if r.scope == SCOPE and r.step == "followups")
    assert (step.outcome, step.attempts) == ("done", 2)
    assert f"[跟进 {hotpot}]（群友7｜2026-11-21）" in asked[0]
    assert f"[跟进 {exam}]（群友8｜2026-11-24）" in asked[0]
    states = await states_now(core, clock, sh(2026, 11, 22, 10, 0))
    assert states == {hotpot: "dropped", exam: "upcoming"}
    [row] = [r for r in await core.followups.repo.plans(SCOPE) if r.memory.id == hotpot]
    assert row.record is not None
    assert row.record.reason == "nightly 2026-11-20: 吃火锅是日常小事"
    # The next night has nothing new to show the model.
    clock.set(sh(2026, 11, 22, 4, 0))
    before = len(asked)
    await core.nightly.run(day="2026-11-21", scope=SCOPE)
    assert len(asked) == before
