from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.nightly.days import (
    day_end,
    day_of,
    day_start,
    last_complete_day,
    parse_cutoff,
    pending_days,
)

SHANGHAI = ZoneInfo("Asia/Shanghai")
BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
FOUR = time(4, 0)


def local(tz_name: str, *args: int) -> datetime:
    return datetime(*args, tzinfo=ZoneInfo(tz_name))  # type: ignore[misc]


def test_chat_after_midnight_belongs_to_the_evening_before() -> None:
    assert day_of(local("Asia/Shanghai", 2026, 11, 21, 1, 30), SHANGHAI, FOUR) == date(2026, 11, 20)
    assert day_of(local("Asia/Shanghai", 2026, 11, 20, 23, 59), SHANGHAI, FOUR) == date(
        2026, 11, 20
    )


def test_the_cutoff_instant_itself_closes_the_day() -> None:
    cutoff = local("Asia/Shanghai", 2026, 11, 21, 4, 0)
    assert day_of(cutoff, SHANGHAI, FOUR) == date(2026, 11, 20)
    assert day_of(cutoff + timedelta(microseconds=1), SHANGHAI, FOUR) == date(2026, 11, 21)


def test_midnight_cutoff_buckets_by_calendar_date() -> None:
    midnight = time(0, 0)
    assert day_of(local("Asia/Shanghai", 2026, 11, 21, 0, 0), SHANGHAI, midnight) == date(
        2026, 11, 20
    )
    assert day_of(local("Asia/Shanghai", 2026, 11, 21, 0, 0, 1), SHANGHAI, midnight) == date(
        2026, 11, 21
    )


def test_shanghai_day_is_24_hours_and_utc_is_eight_hours_behind() -> None:
    day = date(2026, 11, 20)
    assert day_end(day, SHANGHAI, FOUR) == datetime(2026, 11, 20, 20, 0, tzinfo=UTC)
    assert day_end(day, SHANGHAI, FOUR) - day_start(day, SHANGHAI, FOUR) == timedelta(hours=24)


def test_a_utc_instant_is_bucketed_in_the_zone_not_in_utc() -> None:
    # 2026-11-20 21:00 UTC is 05:00 on the 21st in Shanghai: after that night's cutoff.
    assert day_of(datetime(2026, 11, 20, 21, 0, tzinfo=UTC), SHANGHAI, FOUR) == date(2026, 11, 21)
    assert day_of(datetime(2026, 11, 20, 19, 59, tzinfo=UTC), SHANGHAI, FOUR) == date(2026, 11, 20)


def test_spring_forward_day_is_23_hours_long() -> None:
    # Europe/Berlin jumps 02:00 -> 03:00 on 2026-03-29.
    day = date(2026, 3, 28)
    assert day_end(day, BERLIN, FOUR) - day_start(day, BERLIN, FOUR) == timedelta(hours=23)
    assert day_of(local("Europe/Berlin", 2026, 3, 29, 3, 30), BERLIN, FOUR) == day


def test_fall_back_day_is_25_hours_long_and_the_repeated_hour_stays_in_one_day() -> None:
    # Europe/Berlin goes back 03:00 -> 02:00 on 2026-10-25: 02:30 happens twice.
    day = date(2026, 10, 24)
    assert day_end(day, BERLIN, FOUR) - day_start(day, BERLIN, FOUR) == timedelta(hours=25)
    first = datetime(2026, 10, 25, 2, 30, tzinfo=BERLIN, fold=0)
    second = datetime(2026, 10, 25, 2, 30, tzinfo=BERLIN, fold=1)
    assert first.astimezone(UTC) != second.astimezone(UTC)
    assert day_of(first, BERLIN, FOUR) == day_of(second, BERLIN, FOUR) == day


def test_cutoff_inside_a_spring_forward_gap_still_orders_the_days() -> None:
    # New York skips 02:00-03:00 on 2026-03-08; a 02:30 cutoff does not exist that night.
    cutoff = time(2, 30)
    before, gap_day, after = date(2026, 3, 6), date(2026, 3, 7), date(2026, 3, 8)
    assert day_end(before, NEW_YORK, cutoff) < day_end(gap_day, NEW_YORK, cutoff)
    assert day_end(gap_day, NEW_YORK, cutoff) < day_end(after, NEW_YORK, cutoff)
    end = day_end(gap_day, NEW_YORK, cutoff)
    assert day_of(end, NEW_YORK, cutoff) == gap_day
    assert day_of(end + timedelta(microseconds=1), NEW_YORK, cutoff) == after


def test_last_complete_day_is_the_one_that_ended_at_the_cutoff() -> None:
    at_cutoff = local("Asia/Shanghai", 2026, 11, 21, 4, 0)
    assert last_complete_day(at_cutoff, SHANGHAI, FOUR) == date(2026, 11, 20)
    just_before = at_cutoff - timedelta(seconds=1)
    assert last_complete_day(just_before, SHANGHAI, FOUR) == date(2026, 11, 19)
    later = local("Asia/Shanghai", 2026, 11, 21, 16, 0)
    assert last_complete_day(later, SHANGHAI, FOUR) == date(2026, 11, 20)


def test_naive_instants_are_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        day_of(datetime(2026, 11, 21, 1, 30), SHANGHAI, FOUR)  # noqa: DTZ001


@pytest.mark.parametrize("text", ["4", "04-00", "aa:bb", ""])
def test_malformed_cutoff_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="HH:MM"):
        parse_cutoff(text)


def test_parse_cutoff() -> None:
    assert parse_cutoff("04:00") == FOUR
    assert parse_cutoff(" 23:45 ") == time(23, 45)


def test_pending_days_catch_up_in_order_after_downtime() -> None:
    got = pending_days(
        last_done=date(2026, 11, 17), oldest_material=None, latest=date(2026, 11, 20), max_days=14
    )
    assert got == [date(2026, 11, 18), date(2026, 11, 19), date(2026, 11, 20)]


def test_pending_days_first_run_starts_at_the_oldest_material() -> None:
    got = pending_days(
        last_done=None, oldest_material=date(2026, 11, 19), latest=date(2026, 11, 20), max_days=14
    )
    assert got == [date(2026, 11, 19), date(2026, 11, 20)]
    assert pending_days(
        last_done=None, oldest_material=None, latest=date(2026, 11, 20), max_days=14
    ) == [date(2026, 11, 20)]


def test_pending_days_is_empty_when_up_to_date_and_bounded_by_max_days() -> None:
    latest = date(2026, 11, 20)
    assert pending_days(last_done=latest, oldest_material=None, latest=latest, max_days=14) == []
    got = pending_days(last_done=date(2026, 1, 1), oldest_material=None, latest=latest, max_days=3)
    assert got == [date(2026, 11, 18), date(2026, 11, 19), date(2026, 11, 20)]


ZONES = st.sampled_from(
    ["Asia/Shanghai", "UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"]
)
CUTOFFS = st.builds(time, st.integers(0, 23), st.sampled_from([0, 15, 30, 45]))
INSTANTS = st.datetimes(
    min_value=datetime(2000, 1, 1),  # noqa: DTZ001
    max_value=datetime(2100, 1, 1),  # noqa: DTZ001
    timezones=st.just(UTC),
)


@given(instant=INSTANTS, tz_name=ZONES, cutoff=CUTOFFS)
def test_every_instant_falls_in_exactly_one_day(
    instant: datetime, tz_name: str, cutoff: time
) -> None:
    tz = ZoneInfo(tz_name)
    day = day_of(instant, tz, cutoff)
    assert day_start(day, tz, cutoff) < instant <= day_end(day, tz, cutoff)
    # The neighbours do not hold it: the buckets never overlap.
    for other in (day - timedelta(days=1), day + timedelta(days=1)):
        assert not day_start(other, tz, cutoff) < instant <= day_end(other, tz, cutoff)


@given(
    day=st.dates(min_value=date(2000, 1, 2), max_value=date(2099, 12, 30)),
    tz_name=ZONES,
    cutoff=CUTOFFS,
)
def test_days_tile_time_without_gaps(day: date, tz_name: str, cutoff: time) -> None:
    tz = ZoneInfo(tz_name)
    end = day_end(day, tz, cutoff)
    assert day_start(day + timedelta(days=1), tz, cutoff) == end
    assert end > day_start(day, tz, cutoff)
    assert day_of(end, tz, cutoff) == day
    assert day_of(end + timedelta(microseconds=1), tz, cutoff) == day + timedelta(days=1)


@given(instant=INSTANTS, tz_name=ZONES, cutoff=CUTOFFS)
def test_last_complete_day_has_ended_and_the_next_has_not(
    instant: datetime, tz_name: str, cutoff: time
) -> None:
    tz = ZoneInfo(tz_name)
    done = last_complete_day(instant, tz, cutoff)
    assert day_end(done, tz, cutoff) <= instant
    assert day_end(done + timedelta(days=1), tz, cutoff) > instant
