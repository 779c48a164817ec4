"""What is due (memory_core/followups/due.py): examples of each rule, and properties
over random plans, dates, zones and days: nothing is due outside its window, nothing
after its memory is retracted, superseded or forgotten, and hearsay never."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from memory_core.followups.due import (
    Candidate,
    Recorded,
    date_of,
    due_list,
    followup_of,
    local_day,
    plan_day,
    window_of,
)
from memory_core.types import Memory, MemoryType, Word

SH = ZoneInfo("Asia/Shanghai")
T0 = datetime(2026, 12, 7, 2, 0, tzinfo=UTC)  # Monday 10:00 in Shanghai


def plan(
    at: datetime | None,
    *,
    type: MemoryType = "event",
    word: Word | None = "self",
    status: str = "active",
    kind: str = "person",
    memory_id: int = 1,
) -> Memory:
    return Memory(
        id=memory_id,
        scope="private:7",
        type=type,
        subject="阿哲",
        content="阿哲考四级",
        importance=0.5,
        confidence=0.8,
        status=status,  # type: ignore[arg-type]
        valid_from=at if type == "event" else T0,
        valid_to=at if type == "state" else None,
        version=1,
        origin="model",
        created_at=T0,
        updated_at=T0,
        last_accessed_at=None,
        hit_count=0,
        pinned=False,
        starred=False,
        subject_kind=kind,  # type: ignore[arg-type]
        subject_person="7" if kind == "person" else None,
        word=word,
    )


def local(d: date, hh: int = 10, zone: ZoneInfo = SH) -> datetime:
    return datetime.combine(d, time(hh), tzinfo=zone).astimezone(UTC)


EXAM = local(date(2026, 12, 15), 0)  # 下周二, a date without a time of day


def state_at(
    candidate: Candidate, now: datetime, days: int = 3, recorded: Recorded | None = None
) -> str | None:
    found = followup_of(candidate, recorded, now, SH, days)
    return None if found is None else found.state


def test_an_exam_told_on_monday_is_due_wednesday_to_friday_then_expires() -> None:
    exam = Candidate(plan(EXAM), told_first=T0)
    assert state_at(exam, local(date(2026, 12, 15), 20)) == "upcoming"
    for day in (16, 17, 18):
        assert state_at(exam, local(date(2026, 12, day), 9)) == "due"
    assert state_at(exam, local(date(2026, 12, 19), 0)) == "expired"
    assert state_at(exam, local(date(2026, 12, 15), 23) + timedelta(minutes=59)) == "upcoming"
    assert state_at(exam, local(date(2026, 12, 16), 0)) == "due"  # local midnight, not UTC's


def test_a_state_ending_by_the_nightly_cutoff_ended_the_day_before() -> None:
    by_cutoff = plan(local(date(2026, 12, 12), 4), type="state")  # "until the 11th"
    assert plan_day(by_cutoff, local(date(2026, 12, 12), 4), SH) == date(2026, 12, 11)
    midnight = plan(local(date(2026, 12, 12), 0), type="state")
    assert plan_day(midnight, local(date(2026, 12, 12), 0), SH) == date(2026, 12, 12)
    event = plan(local(date(2026, 12, 12), 3))  # an event at 03:00 is that day's
    assert plan_day(event, local(date(2026, 12, 12), 3), SH) == date(2026, 12, 12)
    trip = Candidate(by_cutoff, told_first=T0)
    assert state_at(trip, local(date(2026, 12, 12), 10)) == "due"


def test_the_window_is_the_setting() -> None:
    exam = Candidate(plan(EXAM), told_first=T0)
    assert state_at(exam, local(date(2026, 12, 16)), days=1) == "due"
    assert state_at(exam, local(date(2026, 12, 17)), days=1) == "expired"
    assert window_of(EXAM, SH, 5).last == date(2026, 12, 20)


def test_a_states_date_is_its_end() -> None:
    trip = Candidate(plan(local(date(2026, 12, 11), 18), type="state"), told_first=T0)
    assert date_of(trip.memory) == local(date(2026, 12, 11), 18)
    assert state_at(trip, local(date(2026, 12, 12))) == "due"


def test_only_a_members_own_word_about_an_event_or_state_is_followed_up() -> None:
    now = local(date(2026, 12, 16))
    assert state_at(Candidate(plan(EXAM, word="self-only"), told_first=T0), now) == "due"
    assert state_at(Candidate(plan(EXAM, word="hearsay"), told_first=T0), now) is None
    assert state_at(Candidate(plan(EXAM, word=None), told_first=T0), now) is None
    assert state_at(Candidate(plan(EXAM, kind="group"), told_first=T0), now) is None
    assert state_at(Candidate(plan(EXAM, kind="thing"), told_first=T0), now) is None
    assert state_at(Candidate(plan(EXAM, type="fact"), told_first=T0), now) is None
    assert state_at(Candidate(plan(None), told_first=T0), now) is None
    assert state_at(Candidate(plan(EXAM), told_first=None), now) is None


def test_retracted_superseded_or_forgotten_memories_have_no_followup() -> None:
    now = local(date(2026, 12, 16))
    assert state_at(Candidate(plan(EXAM, status="retracted"), told_first=T0), now) is None
    assert state_at(Candidate(plan(EXAM, status="cold"), told_first=T0), now) is None
    assert state_at(Candidate(plan(EXAM), told_first=T0, superseded=True), now) is None


def test_a_past_event_told_afterwards_is_not_a_plan() -> None:
    interview = local(date(2026, 12, 10), 0)
    told_next_day = local(date(2026, 12, 11), 9)
    assert state_at(Candidate(plan(interview), told_first=told_next_day), told_next_day) is None
    # the same day counts for a date without a time ("今天下午面试" said in the morning)
    morning = local(date(2026, 12, 10), 9)
    assert state_at(Candidate(plan(interview), told_first=morning), local(date(2026, 12, 11))) == (
        "due"
    )
    # with a time of day the words must come before it
    at_three = local(date(2026, 12, 10), 15)
    told = Candidate(plan(at_three), told_first=local(date(2026, 12, 10), 16))
    assert state_at(told, local(date(2026, 12, 11))) is None


def test_their_own_words_after_the_day_answer_it_and_records_win() -> None:
    told_after = Candidate(plan(EXAM), told_first=T0, told_last=local(date(2026, 12, 16), 8))
    assert state_at(told_after, local(date(2026, 12, 16), 12)) == "answered"
    exam = Candidate(plan(EXAM), told_first=T0)
    now = local(date(2026, 12, 17))
    assert state_at(exam, now, recorded="asked") == "asked"
    assert state_at(exam, now, recorded="dropped") == "dropped"
    assert state_at(exam, now, recorded="refused") == "refused"
    assert state_at(exam, local(date(2026, 12, 1)), recorded="answered") == "answered"


def test_the_due_list_is_oldest_plan_first() -> None:
    now = local(date(2026, 12, 17))
    older = Candidate(plan(local(date(2026, 12, 15), 0), memory_id=9), told_first=T0)
    newer = Candidate(plan(local(date(2026, 12, 16), 0), memory_id=2), told_first=T0)
    gone = Candidate(
        plan(local(date(2026, 12, 1), 0), memory_id=3), told_first=T0 - timedelta(days=9)
    )
    found = due_list([(newer, None), (older, None), (gone, None), (older, "asked")], now, SH, 3)
    assert [f.memory.id for f in found] == [9, 2]


# --- properties ----------------------------------------------------------------------

ZONES = st.sampled_from(
    ["Asia/Shanghai", "UTC", "America/Los_Angeles", "Pacific/Kiritimati", "Asia/Kolkata"]
)
INSTANTS = st.datetimes(
    min_value=datetime(2026, 1, 1),  # noqa: DTZ001 (hypothesis wants naive bounds)
    max_value=datetime(2027, 12, 31),  # noqa: DTZ001
    timezones=st.just(UTC),
)


@st.composite
def cases(draw: st.DrawFn) -> tuple[Candidate, datetime, ZoneInfo, int]:
    zone = ZoneInfo(draw(ZONES))
    at = draw(INSTANTS)
    if draw(st.booleans()):  # a date with no time of day: local midnight
        at = datetime.combine(at.astimezone(zone).date(), time(0), tzinfo=zone).astimezone(UTC)
    memory = plan(
        at,
        type=draw(st.sampled_from(["event", "state"])),
        word=draw(st.sampled_from(["self", "self-only", "hearsay", None])),
        status=draw(st.sampled_from(["active", "active", "retracted", "cold"])),
        kind=draw(st.sampled_from(["person", "person", "group", "bot", "thing", "unresolved"])),
    )
    told = at - timedelta(minutes=draw(st.integers(-60 * 24 * 5, 60 * 24 * 30)))
    last = draw(st.one_of(st.none(), st.just(told), INSTANTS))
    candidate = Candidate(memory, told, last, superseded=draw(st.booleans()))
    now = at + timedelta(minutes=draw(st.integers(-60 * 24 * 10, 60 * 24 * 20)))
    return candidate, now, zone, draw(st.integers(1, 10))


@given(cases(), st.sampled_from([None, "asked", "answered", "dropped", "refused"]))
def test_nothing_is_due_outside_its_window_nor_ever_for_an_ended_memory(
    case: tuple[Candidate, datetime, ZoneInfo, int], recorded: str | None
) -> None:
    candidate, now, zone, days = case
    found = followup_of(candidate, recorded, now, zone, days)  # type: ignore[arg-type]
    memory = candidate.memory
    ended = (
        memory.status != "active"
        or candidate.superseded
        or memory.word not in ("self", "self-only")
        or memory.subject_kind != "person"
    )
    if ended:
        assert found is None
    if found is None or found.state != "due":
        return
    at = date_of(memory)
    assert at is not None
    day = plan_day(memory, at, zone)
    assert day < local_day(now, zone) <= day + timedelta(days=days)
    assert recorded is None
    assert local_day(candidate.told_first or now, zone) <= day


@given(cases())
def test_each_day_is_upcoming_then_due_then_expired_in_that_order(
    case: tuple[Candidate, datetime, ZoneInfo, int],
) -> None:
    candidate, now, zone, days = case
    candidate = replace(candidate, told_last=None)
    seen: list[str] = []
    for offset in range(-3, days + 4):
        found = followup_of(candidate, None, now + timedelta(days=offset), zone, days)
        if found is None:
            return
        if not seen or seen[-1] != found.state:
            seen.append(found.state)
    assert seen in (
        ["upcoming", "due", "expired"],
        ["due", "expired"],
        ["upcoming", "due"],
        ["expired"],
        ["upcoming"],
        ["due"],
    )
    today = local_day(now, zone)
    noons = [local(today + timedelta(days=offset), 12, zone) for offset in range(-40, 60)]
    due_days = sum(
        1
        for noon in noons
        if (f := followup_of(candidate, None, noon, zone, days)) and f.state == "due"
    )
    assert due_days == days
