"""The model's date against the words it cites (memory_core/followups/dates.py), read
with recall/when.py at each message's own time."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time

from memory_core.followups.dates import Said, agrees, named_days
from memory_core.followups.due import Candidate, followup_of
from tests.core.followups.test_due import SH, plan


def local(d: date, hh: int = 10) -> datetime:
    return datetime.combine(d, time(hh), tzinfo=SH).astimezone(UTC)


MONDAY = local(date(2026, 12, 7), 21)


def said(text: str, at: datetime = MONDAY) -> tuple[Said, ...]:
    return (Said(at, text),)


def test_every_day_a_message_names_is_read_as_a_plan() -> None:
    assert named_days(Said(MONDAY, "明天去北京出差，周六回来"), SH) == [
        (date(2026, 12, 8), date(2026, 12, 8)),
        (date(2026, 12, 12), date(2026, 12, 12)),
    ]
    # a bare weekday or month-day in a plan is the next one, not the last
    assert named_days(Said(MONDAY, "周日去看演唱会"), SH) == [(date(2026, 12, 13),) * 2]
    assert named_days(Said(MONDAY, "12月1号交论文"), SH) == [(date(2027, 12, 1),) * 2]
    assert named_days(Said(MONDAY, "过几天再说"), SH) == []


def test_a_date_the_words_name_agrees_and_another_does_not() -> None:
    exam = local(date(2026, 12, 15), 0)
    assert agrees(plan(exam), date(2026, 12, 15), said("下周二我考四级"), SH) is True
    assert agrees(plan(exam), date(2026, 12, 15), said("这周二我考四级"), SH) is False
    assert (
        agrees(plan(exam), date(2026, 12, 15), said("月底考四级"), SH) is None
    )  # names no day: no check
    assert agrees(plan(exam), date(2026, 12, 15), (), SH) is None
    # said late in the evening: "明天" is the next local day, not UTC's
    late = local(date(2026, 12, 14), 23)
    assert agrees(plan(exam), date(2026, 12, 15), said("明天考四级", late), SH) is True


def test_a_states_start_or_end_may_be_the_day_named() -> None:
    trip = plan(local(date(2026, 12, 20), 0), type="state")
    moved = replace(trip, valid_from=local(date(2026, 12, 14), 0))
    assert agrees(moved, date(2026, 12, 20), said("下周一去日本玩一周"), SH) is True
    assert agrees(trip, date(2026, 12, 20), said("下周一去日本玩一周"), SH) is False


def test_a_disagreeing_date_makes_no_followup() -> None:
    exam = local(date(2026, 12, 15), 0)
    wrong = Candidate(plan(exam), told_first=MONDAY, said=said("这周二我考四级"))
    right = Candidate(plan(exam), told_first=MONDAY, said=said("下周二我考四级"))
    now = local(date(2026, 12, 16))
    assert followup_of(wrong, None, now, SH, 3).state == "refused"  # type: ignore[union-attr]
    assert followup_of(right, None, now, SH, 3).state == "due"  # type: ignore[union-attr]
    assert followup_of(wrong, "dropped", now, SH, 3).state == "dropped"  # type: ignore[union-attr]
