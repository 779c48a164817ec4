"""Follow-ups on a real store (each backend): the due list reads a chat's own-word
plans with their evidence times, ends a follow-up the moment its memory is retracted,
superseded or forgotten, records what was done about it, and never reads across chats."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from memory_core import EvidenceRef, FakeClock, NewExperience, Yuji
from memory_core.errors import NotFound
from memory_core.memories.outcomes import NewMemory
from memory_core.storage.schema import followups

SH = ZoneInfo("Asia/Shanghai")
P7, G1, G2 = "private:7", "group:1", "group:2"
_fp = itertools.count(1)


def local(d: date, hh: int = 10) -> datetime:
    return datetime.combine(d, time(hh), tzinfo=SH).astimezone(UTC)


MONDAY = local(date(2026, 12, 7))
EXAM = local(date(2026, 12, 15), 0)  # 下周二


async def say(core: Yuji, scope: str, sender: str, name: str, text: str, at: datetime) -> int:
    return await core.archive.append(
        NewExperience(
            scope=scope,
            fingerprint=f"f{next(_fp)}",
            sender_id=sender,
            sender_name=name,
            text=text,
            segments=[{"type": "text", "data": {"text": text}}],
            sent_at=at,
        )
    )


async def plan(
    core: Yuji,
    scope: str,
    who: str,
    content: str,
    at: datetime,
    *evidence: int,
    kind: str = "event",
) -> int:
    written = await core.memories.write(
        scope,
        type=kind,  # type: ignore[arg-type]
        subject=who,
        content=content,
        evidence=[EvidenceRef(experience_id=e) for e in evidence],
        valid_from=at if kind == "event" else MONDAY,
        valid_to=at if kind == "state" else None,
        subject_id="7" if who == "阿哲" else "8",
    )
    return written.memory.id


def at_day(clock: FakeClock, day: int, hh: int = 10) -> datetime:
    clock.set(local(date(2026, 12, day), hh))
    return clock.now()


async def ids(core: Yuji, scope: str | None = None) -> list[int]:
    return [f.memory.id for f in await core.followups.due(scope)]


@pytest.fixture(autouse=True)
def monday(clock: FakeClock) -> None:
    clock.set(MONDAY)


async def test_an_exam_said_on_monday_is_due_wednesday_to_friday(
    core: Yuji, clock: FakeClock
) -> None:
    said = await say(core, P7, "7", "阿哲", "我下周二考四级", MONDAY)
    exam = await plan(core, P7, "阿哲", "阿哲下周二（12月15日）考四级", EXAM, said)
    assert await ids(core) == []
    at_day(clock, 15, 23)
    assert await ids(core) == []
    for day in (16, 17, 18):
        at_day(clock, day)
        [due] = await core.followups.due(P7)
        assert (due.memory.id, due.person, due.window.day) == (exam, "7", date(2026, 12, 15))
    at_day(clock, 19, 0)
    assert await ids(core) == []
    [gone] = await core.followups.listing(P7)
    assert gone.state == "expired"


async def test_hearsay_a_past_event_and_other_chats_are_not_due(
    core: Yuji, clock: FakeClock
) -> None:
    by_other = await say(core, G1, "8", "小周", "阿哲下周二考四级", MONDAY)
    await say(core, G1, "7", "阿哲", "在吗", MONDAY)
    await plan(core, G1, "阿哲", "阿哲下周二考四级", EXAM, by_other)  # hearsay
    afterwards = await say(core, G1, "7", "阿哲", "我上周二考完四级了", local(date(2026, 12, 16)))
    await plan(core, G1, "阿哲", "阿哲12月15日考了四级", EXAM, afterwards)
    own = await say(core, G2, "7", "阿哲", "我下周二考四级", MONDAY)
    other_chat = await plan(core, G2, "阿哲", "阿哲下周二考四级", EXAM, own)
    at_day(clock, 16)
    assert await ids(core, G1) == []
    assert await ids(core, G2) == [other_chat]
    assert await ids(core) == [other_chat]


async def test_retract_forget_and_supersede_end_it_at_once(core: Yuji, clock: FakeClock) -> None:
    said = await say(core, P7, "7", "阿哲", "我下周二考四级，周五去面试，下周一搬家", MONDAY)
    exam = await plan(core, P7, "阿哲", "阿哲12月15日考四级", EXAM, said)
    interview = await plan(core, P7, "阿哲", "阿哲12月11日面试", local(date(2026, 12, 11), 0), said)
    move = await plan(core, P7, "阿哲", "阿哲12月14日搬家", local(date(2026, 12, 14), 0), said)
    at_day(clock, 16)
    assert await ids(core, P7) == [move, exam]
    await core.memories.retract(P7, exam, reason="说错了", changed_by="admin")
    await core.memories.forget(P7, move, reason="forget-me")
    moved = await say(core, P7, "7", "阿哲", "面试改到下周四了", local(date(2026, 12, 10)))
    later = await plan(core, P7, "阿哲", "阿哲12月17日面试", local(date(2026, 12, 17), 0), moved)
    outcome = await core.memories.supersede(P7, interview, later, reason="改期", changed_by="model")
    assert outcome.applied
    assert await ids(core, P7) == []
    at_day(clock, 18)
    assert await ids(core, P7) == [later]


async def test_a_state_is_due_after_it_ends(core: Yuji, clock: FakeClock) -> None:
    said = await say(core, P7, "7", "阿哲", "我这周出差，周五回来", MONDAY)
    trip = await plan(
        core, P7, "阿哲", "阿哲出差到周五", local(date(2026, 12, 11), 18), said, kind="state"
    )
    at_day(clock, 12)
    assert await ids(core, P7) == [trip]


async def test_what_was_done_is_recorded_and_ends_or_holds_it(core: Yuji, clock: FakeClock) -> None:
    said = await say(core, P7, "7", "阿哲", "我下周二考四级，下周三还有个面试", MONDAY)
    exam = await plan(core, P7, "阿哲", "阿哲12月15日考四级", EXAM, said)
    interview = await plan(core, P7, "阿哲", "阿哲12月16日面试", local(date(2026, 12, 16), 0), said)
    at_day(clock, 17)
    assert await ids(core, P7) == [exam, interview]
    await core.followups.mark_asked(P7, exam, sent_text="四级考得怎么样？")
    dropped = await core.followups.drop(P7, interview, by="admin:1")
    assert dropped.memory.id == interview
    states = {f.memory.id: f.state for f in await core.followups.listing(P7)}
    assert states == {exam: "asked", interview: "dropped"}
    [row] = [r for r in await core.followups.repo.plans(P7) if r.memory.id == exam]
    assert row.record is not None
    assert (row.record.sent_text, row.record.asked_at) == ("四级考得怎么样？", clock.now())
    await core.followups.mark_answered(P7, exam)
    assert {f.memory.id: f.state for f in await core.followups.listing(P7)}[exam] == "answered"
    with pytest.raises(NotFound):
        await core.followups.drop(G1, exam, by="admin:1")  # another chat's memory


async def test_their_own_later_words_answer_it(core: Yuji, clock: FakeClock) -> None:
    said = await say(core, P7, "7", "阿哲", "我下周二考四级", MONDAY)
    exam = await plan(core, P7, "阿哲", "阿哲12月15日考四级", EXAM, said)
    told = await say(core, P7, "7", "阿哲", "四级考完了，感觉还行", local(date(2026, 12, 15), 20))
    after = await say(core, P7, "7", "阿哲", "出成绩了再说", local(date(2026, 12, 16), 9))
    await core.memories.edit(
        P7,
        exam,
        content="阿哲12月15日考了四级，感觉还行",
        reason="后续",
        changed_by="model",
        evidence=[EvidenceRef(experience_id=told), EvidenceRef(experience_id=after)],
    )
    at_day(clock, 16, 12)
    [found] = await core.followups.listing(P7)
    assert found.state == "answered"


async def test_offers_count_once_a_day_and_chat_choices_are_kept(
    core: Yuji, clock: FakeClock
) -> None:
    said = await say(core, P7, "7", "阿哲", "我下周二考四级", MONDAY)
    exam = await plan(core, P7, "阿哲", "阿哲12月15日考四级", EXAM, said)
    repo = core.followups.repo
    for day in ("2026-12-16", "2026-12-16", "2026-12-17"):
        await repo.offered(P7, exam, "7", day, at=clock.now())
    [row] = await repo.plans(P7)
    assert row.record is not None
    assert (row.record.offers, row.record.offered_day, row.record.state) == (2, "2026-12-17", None)
    assert await repo.chat_enabled(G1) is None
    await repo.set_chat(G1, True, "admin:1", at=clock.now())
    await repo.set_chat(G1, False, "admin:2", at=clock.now())
    assert (await repo.chat_enabled(G1), await repo.chat_enabled(G2)) == (False, None)
    await repo.set_muted(G1, "7", True, at=clock.now())
    await repo.set_muted(G1, "7", True, at=clock.now())
    await repo.set_muted(G1, "8", True, at=clock.now())
    await repo.set_muted(G1, "8", False, at=clock.now())
    assert (await repo.muted(G1), await repo.muted(G2)) == ({"7"}, set())


async def test_more_plans_than_one_read_holds(core: Yuji, clock: FakeClock) -> None:
    said = await say(core, P7, "7", "阿哲", "我的安排", MONDAY)
    items = [
        NewMemory(
            type="event",
            subject="阿哲",
            content=f"阿哲的第{i}件事",
            evidence=(EvidenceRef(experience_id=said),),
            valid_from=EXAM + timedelta(minutes=i),
            subject_id="7",
        )
        for i in range(520)
    ]
    await core.memories.write_many(P7, items)
    at_day(clock, 16)
    assert len(await ids(core, P7)) == 520


async def test_a_date_the_words_do_not_name_makes_none_and_status_counts_it(
    core: Yuji, clock: FakeClock
) -> None:
    said = await say(core, P7, "7", "阿哲", "下周二我考四级", MONDAY)
    wrong = await plan(core, P7, "阿哲", "阿哲12月8日考四级", local(date(2026, 12, 8), 0), said)
    right = await plan(core, P7, "阿哲", "阿哲12月15日考四级", EXAM, said)
    at_day(clock, 9)
    assert await ids(core, P7) == []
    at_day(clock, 16)
    assert await ids(core, P7) == [right]
    states = {f.memory.id: f.state for f in await core.followups.listing(P7)}
    assert states == {wrong: "refused", right: "due"}
    status = await core.chat_commands.status(P7)
    assert "日期对不上、不跟进的计划：1 条" in status


async def test_forgetting_a_person_ends_their_followups_and_blanks_what_was_sent(
    core: Yuji, clock: FakeClock
) -> None:
    said = await say(core, P7, "7", "阿哲", "我下周二考四级", MONDAY)
    exam = await plan(core, P7, "阿哲", "阿哲12月15日考四级", EXAM, said)
    at_day(clock, 16)
    await core.followups.mark_asked(P7, exam, sent_text="阿哲，四级考得怎么样？")
    await core.followups.repo.set_muted(P7, "7", True, at=clock.now())
    await core.porting.forget_person(P7, "7", requested_by="7")
    assert await core.followups.listing(P7) == []  # the plan's memory is retracted
    async with core.db.read() as conn:
        rows = (await conn.execute(select(followups.c.sent_text, followups.c.state))).all()
    assert [tuple(r) for r in rows] == [(None, "asked")]
    assert await core.followups.repo.muted(P7) == {"7"}  # their wish not to be asked stays


async def test_a_plan_carried_into_a_chat_is_never_due_there(core: Yuji, clock: FakeClock) -> None:
    """His exam, said in G2, travels into G1 and his private chat (he opted in), yet is
    due only where it was said: the due list reads the chat's own memories alone."""
    own = await say(core, G2, "7", "阿哲", "我下周二考四级", MONDAY)
    exam = await plan(core, G2, "阿哲", "阿哲下周二考四级", EXAM, own)
    await say(core, G1, "7", "阿哲", "大家好", MONDAY)
    await say(core, P7, "7", "阿哲", "在吗", MONDAY)
    await core.carrying.choose("qq", "7", into_groups=True)
    now = at_day(clock, 16)
    for chat in (G1, P7):
        assert [m.id for m in await core.carrying.carried(chat, ("7",), now)] == [exam]
        assert await ids(core, chat) == []
        assert await core.followups.offer(chat, "7", now) is None
        assert [f.memory.id for f in await core.followups.listing(chat, now)] == []
    assert await ids(core, G2) == [exam]
    assert await ids(core) == [exam]
