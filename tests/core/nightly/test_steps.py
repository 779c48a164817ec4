"""Each step against the scripted model: a valid reply, an invalid one then a valid
one, and a model that never answers usably."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from sqlalchemy import select

from memory_core import FakeClock, Yuji
from memory_core.llm.fake import ScriptedLLM, text_response
from memory_core.nightly import StepReport
from memory_core.storage.schema import fragments, nightly_settled
from memory_core.types import EvidenceRef, Memory, MemoryType

from .seed import SCOPE, day_script, fragment, reply, sh

DAY = "2026-11-20"
GARBAGE = text_response("抱歉，我无法完成这个请求。")


def by_step(reports: list[StepReport]) -> dict[str, StepReport]:
    return {r.step: r for r in reports if r.scope == SCOPE}


async def state(core: Yuji, content: str, until: datetime, since: datetime) -> Memory:
    [exp] = await _archive_one(core, since, f"我{content}")
    outcome = await core.memories.write(
        SCOPE,
        type="state",
        subject="南杉",
        content=content,
        evidence=[EvidenceRef(experience_id=exp)],
        valid_from=since,
        valid_to=until,
    )
    return outcome.memory


async def _archive_one(core: Yuji, at: datetime, text: str) -> list[int]:
    from .seed import archive

    return await archive(core, SCOPE, at, [text])


# --- step 1: settle ----------------------------------------------------------------------


async def test_settle_rewrites_a_past_due_state_in_past_tense_and_keeps_evidence(
    core: Yuji, llm: ScriptedLLM
) -> None:
    trip = await state(core, "这周在杭州出差", sh(2026, 11, 20, 18, 0), sh(2026, 11, 16, 9, 0))
    future = await state(core, "下周考试", sh(2026, 11, 28, 0, 0), sh(2026, 11, 19, 9, 0))
    evidence = await core.memories.evidence(SCOPE, trip.id)
    llm.push(reply({"rewrites": [{"id": trip.id, "past_tense": "那周在杭州出差（已结束）"}]}))

    steps = by_step(await core.nightly.run(day=DAY, scope=SCOPE))

    assert steps["settle"].outcome == "done"
    assert steps["settle"].attempts == 1
    settled = await core.memories.get(SCOPE, trip.id)
    assert (settled.content, settled.version) == ("那周在杭州出差（已结束）", 2)
    assert settled.valid_to == trip.valid_to
    assert await core.memories.evidence(SCOPE, trip.id) == evidence
    history = await core.memories.history(SCOPE, trip.id)
    assert [h.content for h in history] == ["这周在杭州出差", "那周在杭州出差（已结束）"]
    assert (await core.memories.get(SCOPE, future.id)).version == 1
    prompt = llm.requests[0].messages[1].content or ""
    assert f"[状态 {trip.id}]" in prompt
    assert f"[状态 {future.id}]" not in prompt


async def test_settle_never_settles_the_same_state_twice(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock
) -> None:
    trip = await state(core, "这周在杭州出差", sh(2026, 11, 20, 18, 0), sh(2026, 11, 16, 9, 0))
    llm.push(reply({"rewrites": [{"id": trip.id, "past_tense": "那周在杭州出差"}]}))
    llm.push(reply({"card": "南杉那周在杭州出差"}))  # the rewrite changed 南杉's memories
    llm.push(reply({"drop": []}))  # her trip, told that day, is a new follow-up: kept
    await core.nightly.run(day=DAY, scope=SCOPE)
    clock.advance(timedelta(days=1))

    steps = by_step(await core.nightly.run(scope=SCOPE))

    assert steps["settle"].outcome == "skipped"
    assert len(llm.requests) == 3
    async with core.db.read() as conn:
        rows = (await conn.execute(select(nightly_settled.c.memory_id))).all()
    assert [r[0] for r in rows] == [trip.id]


async def test_settle_invalid_then_valid(core: Yuji, llm: ScriptedLLM) -> None:
    trip = await state(core, "这周在杭州出差", sh(2026, 11, 20, 18, 0), sh(2026, 11, 16, 9, 0))
    llm.push(
        reply({"rewrites": [{"id": trip.id + 99, "past_tense": "编出来的"}]}),
        reply({"rewrites": [{"id": trip.id, "past_tense": "那周在杭州出差"}]}),
        reply({"card": "南杉那周在杭州出差"}),  # the rewrite changed 南杉's memories
    )

    steps = by_step(await core.nightly.run(day=DAY, scope=SCOPE))

    assert steps["settle"].outcome == "done"
    assert steps["settle"].attempts == 2
    assert [r.temperature for r in llm.requests[:2]] == [0.7, 0.56]
    assert (await core.memories.get(SCOPE, trip.id)).content == "那周在杭州出差"


# --- step 2: diary ------------------------------------------------------------------------


async def test_diary_absorbs_the_days_fragments_and_keeps_them_archived(
    core: Yuji, llm: ScriptedLLM
) -> None:
    f1 = await fragment(core, SCOPE, sh(2026, 11, 20, 21, 3), "南杉说出差回来了。")
    f2 = await fragment(core, SCOPE, sh(2026, 11, 21, 1, 30), "小白约周六爬山。")
    later = await fragment(core, SCOPE, sh(2026, 11, 21, 4, 30), "第二天的事。")
    llm.push(*day_script(diary="南杉出差回来，小白约她周六爬山。"))

    steps = by_step(await core.nightly.run(day=DAY, scope=SCOPE))

    assert steps["diary"].outcome == "done"
    diary = await core.nightly.diary(SCOPE, DAY)
    assert diary is not None
    assert diary.content == "南杉出差回来，小白约她周六爬山。"
    assert diary.fragment_ids == (f1, f2)
    async with core.db.read() as conn:
        rows = dict((await conn.execute(select(fragments.c.id, fragments.c.archived))).all())
    assert rows == {f1: True, f2: True, later: False}
    prompt = llm.requests[0].messages[1].content or ""
    assert f"[碎片 {f1}] 11-20 21:03" in prompt
    assert "第二天的事" not in prompt


async def test_a_fragment_consolidated_late_joins_the_next_diary(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock
) -> None:
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "当天的事。")
    llm.push(*day_script())
    await core.nightly.run(day=DAY, scope=SCOPE)
    # Consolidated after the night ran, about the 20th: nobody's day unless <= cutoff.
    late = await fragment(core, SCOPE, sh(2026, 11, 21, 2, 0), "凌晨补上的事。")
    clock.advance(timedelta(days=1))
    llm.push(*day_script(diary="第二天的小传"))

    await core.nightly.run(scope=SCOPE)

    diary = await core.nightly.diary(SCOPE, "2026-11-21")
    assert diary is not None
    assert diary.fragment_ids == (late,)


async def test_diary_invalid_then_valid(core: Yuji, llm: ScriptedLLM) -> None:
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "南杉说出差回来了。")
    llm.push(text_response("好的，这是今天的小传：……"), *day_script())

    steps = by_step(await core.nightly.run(day=DAY, scope=SCOPE))

    assert steps["diary"].outcome == "done"
    assert steps["diary"].attempts == 2
    assert await core.nightly.diary(SCOPE, DAY) is not None


# --- step 3: cards --------------------------------------------------------------------------


async def test_cards_apply_changes_and_keep_the_displaced_preference_as_a_past_state(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock
) -> None:
    await fragment(core, SCOPE, sh(2026, 11, 19, 21, 0), "小白说喜欢清淡。")
    clock.set(sh(2026, 11, 20, 4, 0))
    llm.push(
        *day_script(changes=[{"kind": "preferences", "action": "add", "text": "小白喜欢清淡口味"}])
    )
    await core.nightly.run(day="2026-11-19", scope=SCOPE)
    frag = await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "小白说最近改吃辣了。")
    clock.set(sh(2026, 11, 21, 4, 0))
    llm.push(
        *day_script(
            changes=[
                {
                    "kind": "preferences",
                    "action": "conflict",
                    "text": "小白最近改吃辣了",
                    "replaces": "小白喜欢清淡口味",
                    "old_past_tense": "小白以前喜欢清淡口味",
                },
                {"kind": "goals", "action": "add", "text": "周六一起爬山"},
            ],
            timeline="第一次约好一起爬山",
        )
    )

    steps = by_step(await core.nightly.run(day=DAY, scope=SCOPE))

    assert steps["cards"].outcome == "done"
    cards = {c.kind: c for c in await core.nightly.cards(SCOPE)}
    assert cards["preferences"].content == "小白最近改吃辣了"
    assert cards["preferences"].version == 2
    assert cards["goals"].content == "周六一起爬山"
    [old] = list(await core.memories.newest(SCOPE, types=["state"]))
    assert old.content == "小白以前喜欢清淡口味"
    assert old.valid_to == sh(2026, 11, 21, 4, 0)
    assert old.valid_from == sh(2026, 11, 19, 4, 0)  # since the night that wrote the line
    assert [e.fragment_id for e in await core.memories.evidence(SCOPE, old.id)] == [frag]
    blocks = await core.nightly.blocks(SCOPE, clock.now(), [])
    assert blocks.timeline == ("2026-11-20：第一次约好一起爬山",)
    assert "小白以前喜欢清淡口味" not in " ".join(blocks.states)
    # The next night does not "settle" the displaced part again.
    clock.advance(timedelta(days=1))
    await core.nightly.run(scope=SCOPE)
    assert (await core.memories.get(SCOPE, old.id)).version == 1


async def test_cards_invalid_then_valid(core: Yuji, llm: ScriptedLLM) -> None:
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "小白说喜欢猫。")
    script = day_script(changes=[{"kind": "preferences", "action": "add", "text": "小白喜欢猫"}])
    llm.push(
        script[0],
        reply({"changes": [{"kind": "hobbies", "action": "add", "text": "x"}]}),
        *script[1:],
    )

    steps = by_step(await core.nightly.run(day=DAY, scope=SCOPE))

    assert steps["cards"].attempts == 2
    assert [c.content for c in await core.nightly.cards(SCOPE)] == ["小白喜欢猫"]


# --- step 3.5: states ---------------------------------------------------------------------------


async def test_states_resolves_early_only_on_the_diarys_words(core: Yuji, llm: ScriptedLLM) -> None:
    trip = await state(core, "这周在杭州出差", sh(2026, 11, 25, 0, 0), sh(2026, 11, 16, 9, 0))
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "南杉说出差提前结束了。")
    script = day_script(diary="南杉说出差提前结束，今天回到了家。")
    made_up = {
        "action": "resolved",
        "id": trip.id,
        "quote": "南杉说她不去了",
        "content": "那周在杭州出差",
    }
    real = {**made_up, "quote": "出差提前结束", "content": "那周在杭州出差，提前结束了"}
    new = {
        "action": "new",
        "quote": "今天回到了家",
        "content": "南杉在家休假",
        "subject": "南杉",
        "until": "2026-11-23",
    }
    llm.push(
        *script[:2],
        reply({"card": "南杉这周在杭州出差"}),  # her state was written today
        reply({"changes": [made_up]}),
        reply({"changes": [real, new]}),
        script[3],
    )

    steps = by_step(await core.nightly.run(day=DAY, scope=SCOPE))

    assert steps["states"].outcome == "done"
    assert steps["states"].attempts == 2
    resolved = await core.memories.get(SCOPE, trip.id)
    assert resolved.content == "那周在杭州出差，提前结束了"
    assert resolved.valid_to == sh(2026, 11, 21, 4, 0)
    [fresh] = [m for m in await core.memories.newest(SCOPE, types=["state"]) if m.id != trip.id]
    assert (fresh.subject, fresh.content) == ("南杉", "南杉在家休假")
    assert fresh.valid_to == sh(2026, 11, 24, 4, 0)


async def test_states_without_diary_mentions_changes_nothing(core: Yuji, llm: ScriptedLLM) -> None:
    trip = await state(core, "这周在杭州出差", sh(2026, 11, 25, 0, 0), sh(2026, 11, 16, 9, 0))
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "聊了猫。")
    diary, cards, states, events = day_script(diary="大家聊了猫。")
    llm.push(diary, cards, reply({"card": "南杉这周在杭州出差"}), states, events)

    steps = by_step(await core.nightly.run(day=DAY, scope=SCOPE))

    assert steps["states"].outcome == "done"
    assert (await core.memories.get(SCOPE, trip.id)).version == 1


# --- step 4: events ---------------------------------------------------------------------------


async def test_events_come_from_fragments_with_evidence(core: Yuji, llm: ScriptedLLM) -> None:
    f1 = await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "小白约南杉周六爬山。")
    f2 = await fragment(core, SCOPE, sh(2026, 11, 20, 22, 0), "南杉答应了。")
    event = {
        "subject": "小白",
        "content": "2026-11-20 小白约南杉周六去爬山，南杉答应了",
        "importance": 0.7,
        "fragment_ids": [f1, f2],
    }
    script = day_script()
    llm.push(
        *script[:3],
        reply({"events": [{**event, "fragment_ids": [f1, 999]}]}),
        reply({"events": [event]}),
    )

    steps = by_step(await core.nightly.run(day=DAY, scope=SCOPE))

    assert steps["events"].outcome == "done"
    assert steps["events"].attempts == 2
    [memory] = await core.memories.newest(SCOPE, types=["event"])
    assert memory.content == event["content"]
    assert memory.valid_from == sh(2026, 11, 20, 21, 0)
    refs = await core.memories.evidence(SCOPE, memory.id)
    assert sorted(r.fragment_id for r in refs if r.fragment_id) == [f1, f2]
    prompt = llm.requests[-1].messages[1].content or ""
    assert "小白约南杉周六爬山" in prompt
    assert "今日小传" not in prompt


# --- always invalid ---------------------------------------------------------------------------


@pytest.mark.parametrize("failing", ["settle", "diary", "cards", "states", "events"])
async def test_a_model_that_never_answers_usably_fails_that_step_only(
    core: Yuji, llm: ScriptedLLM, failing: str
) -> None:
    trip = await state(core, "这周在杭州出差", sh(2026, 11, 20, 18, 0), sh(2026, 11, 16, 9, 0))
    await fragment(core, SCOPE, sh(2026, 11, 20, 21, 0), "南杉说出差回来了。")
    diary, cards, states, events = day_script()
    valid = [
        reply({"rewrites": [{"id": trip.id, "past_tense": "那周在杭州出差"}]}),
        diary,
        cards,
        reply({"card": "南杉那周在杭州出差"}),  # the rewrite changed 南杉's memories
        states,
        events,
    ]
    order = ["settle", "diary", "cards", "people", "states", "events"]
    llm.push(*valid[: order.index(failing)])
    llm.default = GARBAGE

    steps = by_step(await core.nightly.run(day=DAY, scope=SCOPE))

    assert steps[failing].outcome == "failed"
    assert "InvalidReply" in steps[failing].detail
    assert steps[failing].attempts == 6
    assert all(steps[s].outcome == "done" for s in order[: order.index(failing)])
    assert all(s not in steps for s in [*order[order.index(failing) + 1 :], "gc"])
    last = await core.nightly.last_run(SCOPE)
    assert last.consecutive_failures == 1
    assert last.retry_at is not None
    assert {s.step: s.state for s in last.steps}[failing] == "failed"
    if failing == "diary":
        assert await core.nightly.diary(SCOPE, DAY) is None
    if failing == "cards":
        assert await core.nightly.cards(SCOPE) == []


# --- step 5: gc ----------------------------------------------------------------------------------


async def test_gc_moves_idle_memories_to_cold_and_spares_the_exempt(
    core: Yuji, clock: FakeClock
) -> None:
    now = clock.now()
    clock.set(now - timedelta(days=200))
    [exp] = await _archive_one(core, clock.now(), "很久以前的话")
    ev = [EvidenceRef(experience_id=exp)]

    async def write(type: MemoryType, subject: str, content: str) -> Memory:
        outcome = await core.memories.write(
            SCOPE, type=type, subject=subject, content=content, evidence=ev
        )
        return outcome.memory

    idle = await write("fact", "小白", "小白养过鱼")
    rule = await write("rule", "group", "不发语音")
    pinned = await write("fact", "南杉", "南杉是群主")
    credited = await write("fact", "南杉", "南杉怕冷")
    await core.memories.set_flags(SCOPE, pinned.id, pinned=True)
    await core.memories.credit(SCOPE, [credited.id], clock.now())
    clock.set(now)

    steps = by_step(await core.nightly.run(day=DAY, scope=SCOPE))

    assert steps["gc"].outcome == "done"
    statuses = {m.id: m.status for m in await core.memories.newest(SCOPE, status=None)}
    assert statuses == {
        idle.id: "cold",
        rule.id: "active",
        pinned.id: "active",
        credited.id: "active",
    }
    history = await core.memories.history(SCOPE, idle.id)
    assert [h.status for h in history] == ["active", "cold"]
