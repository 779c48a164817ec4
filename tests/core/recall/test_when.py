"""The day a wake names (recall/when.py): both languages, in the chat's time zone."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.recall.when import Span, cn_number, named

SHANGHAI = ZoneInfo("Asia/Shanghai")
LONDON = ZoneInfo("Europe/London")
CHICAGO = ZoneInfo("America/Chicago")
# Friday 20 November 2026, 21:30 in Shanghai.
NOW = datetime(2026, 11, 20, 13, 30, tzinfo=UTC)


def days(span: Span | None, zone: ZoneInfo = SHANGHAI) -> tuple[date, date] | None:
    """The first and last local day of a span."""
    if span is None:
        return None
    last = (span.end - timedelta(seconds=1)).astimezone(zone).date()
    return span.start.astimezone(zone).date(), last


def d(month: int, day: int, year: int = 2026) -> tuple[date, date]:
    return date(year, month, day), date(year, month, day)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5月6号我读的那本书叫什么", d(5, 6)),
        ("5月6日那天谁请客", d(5, 6)),
        ("12月3号晚上我们在哪吃的", d(12, 3, 2025)),  # the most recent 3 December
        ("2026年5月6日的会", d(5, 6)),
        ("十一月三号那天", d(11, 3)),
        ("今天早上说的那家店", d(11, 20)),
        ("昨天晚上吃了啥", d(11, 19)),
        ("前天晚上我说了什么", d(11, 18)),
        ("大前天", d(11, 17)),
        ("三天前买的那个", d(11, 17)),
        ("10天前", d(11, 10)),
        ("上周六去哪了", d(11, 14)),
        ("这周三开会说了啥", d(11, 18)),
        ("周三那天", d(11, 18)),
        ("周五", d(11, 20)),  # today is a Friday: the most recent one is today
        ("礼拜天干嘛了", d(11, 15)),
        ("星期二", d(11, 17)),
        ("下周六我们去哪", d(11, 28)),
        ("我打算周六去爬山", d(11, 21)),  # a plan: the coming Saturday
        ("上周", (date(2026, 11, 9), date(2026, 11, 15))),
        ("上个月", (date(2026, 10, 1), date(2026, 10, 31))),
        ("上周末", (date(2026, 11, 14), date(2026, 11, 15))),
        ("5月份的事", (date(2026, 5, 1), date(2026, 5, 31))),
        ("what did I say yesterday", d(11, 19)),
        ("the day before yesterday", d(11, 18)),
        ("3 days ago", d(11, 17)),
        ("two days ago", d(11, 18)),
        ("last Tuesday", d(11, 17)),
        ("what happened on Friday", d(11, 20)),
        ("last Friday", d(11, 13)),  # "last": before today
        ("next Saturday", d(11, 21)),
        ("on 7 May", d(5, 7)),
        ("May 7th", d(5, 7)),
        ("the 3rd of December", d(12, 3, 2025)),
        ("last week", (date(2026, 11, 9), date(2026, 11, 15))),
        ("last month", (date(2026, 10, 1), date(2026, 10, 31))),
        ("in May", (date(2026, 5, 1), date(2026, 5, 31))),
        ("2026-05-06", d(5, 6)),
    ],
)
def test_named_days(text: str, expected: tuple[date, date]) -> None:
    assert days(named(text, NOW, SHANGHAI)) == expected


@pytest.mark.parametrize(
    "text",
    ["7/5那天", "5.6", "每周六去琴行", "三个月了", "哈哈哈", "you may be right", "Fridays are fun"],
)
def test_forms_that_name_no_day(text: str) -> None:
    assert named(text, NOW, SHANGHAI) is None


def test_a_day_runs_midnight_to_midnight_in_the_chats_zone() -> None:
    late = datetime(2026, 11, 20, 15, 30, tzinfo=UTC)  # 23:30 in Shanghai
    today = named("今天", late, SHANGHAI)
    assert days(today) == d(11, 20)
    assert today is not None
    assert today.start == datetime(2026, 11, 19, 16, 0, tzinfo=UTC)
    just_after = datetime(2026, 11, 20, 16, 10, tzinfo=UTC)  # 00:10 on the 21st
    assert days(named("昨天", just_after, SHANGHAI)) == d(11, 20)
    # The same instant in London is still the afternoon of the 20th.
    assert days(named("昨天", just_after, LONDON), LONDON) == d(11, 19)


def test_parts_of_the_day_narrow_nothing() -> None:
    evening = named("昨天晚上", NOW, SHANGHAI)
    morning = named("昨天早上", NOW, SHANGHAI)
    assert evening is not None
    assert morning is not None
    assert (evening.start, evening.end) == (morning.start, morning.end)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("12", 12),
        ("十", 10),
        ("十二", 12),
        ("二十三", 23),
        ("两", 2),
        ("三十一", 31),
        ("二〇二六", 2026),
        ("几", None),
    ],
)
def test_chinese_numbers(text: str, value: int | None) -> None:
    assert cn_number(text) == value


instants = st.datetimes(
    min_value=datetime(2001, 1, 1),  # noqa: DTZ001 (hypothesis bounds are naive)
    max_value=datetime(2090, 12, 31),  # noqa: DTZ001
    timezones=st.just(UTC),
)
zones = st.sampled_from([SHANGHAI, LONDON, CHICAGO, ZoneInfo("Pacific/Auckland")])


@given(now=instants, zone=zones, word=st.sampled_from(["今天", "today", "tonight", "今晚"]))
def test_today_holds_the_wake(now: datetime, zone: ZoneInfo, word: str) -> None:
    span = named(word, now, zone)
    assert span is not None
    assert span.start <= now < span.end
    assert timedelta(hours=22) <= span.end - span.start <= timedelta(hours=26)


@given(now=instants, zone=zones)
def test_yesterday_ends_where_today_starts(now: datetime, zone: ZoneInfo) -> None:
    for earlier, later in (
        ("昨天", "今天"),
        ("前天", "昨天"),
        ("the day before yesterday", "yesterday"),
    ):
        a, b = named(earlier, now, zone), named(later, now, zone)
        assert a is not None
        assert b is not None
        assert a.end == b.start


WEEKDAYS_CN = "一二三四五六日"
WEEKDAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@given(now=instants, zone=zones, weekday=st.integers(0, 6), english=st.booleans())
def test_a_bare_weekday_is_the_latest_one_not_after_today(
    now: datetime, zone: ZoneInfo, weekday: int, english: bool
) -> None:
    text = f"on {WEEKDAYS_EN[weekday]}" if english else f"周{WEEKDAYS_CN[weekday]}"
    found = days(named(text, now, zone), zone)
    today = now.astimezone(zone).date()
    assert found is not None
    assert found[0] == found[1]
    assert found[0].weekday() == weekday
    assert timedelta(0) <= today - found[0] < timedelta(days=7)


@given(now=instants, zone=zones, weekday=st.integers(0, 6))
def test_last_and_next_week_days(now: datetime, zone: ZoneInfo, weekday: int) -> None:
    today = now.astimezone(zone).date()
    monday = today - timedelta(days=today.weekday())
    last = days(named(f"上周{WEEKDAYS_CN[weekday]}", now, zone), zone)
    assert last == (monday - timedelta(days=7 - weekday),) * 2
    coming = days(named(f"下周{WEEKDAYS_CN[weekday]}", now, zone), zone)
    assert coming is not None
    assert coming[0] > today
    assert coming[0].weekday() == weekday
    before = days(named(f"last {WEEKDAYS_EN[weekday]}", now, zone), zone)
    assert before is not None
    assert timedelta(days=1) <= today - before[0] <= timedelta(days=7)


@given(now=instants, zone=zones, month=st.integers(1, 12), day=st.integers(1, 28))
def test_a_month_day_without_year_is_the_latest_not_after_the_wake(
    now: datetime, zone: ZoneInfo, month: int, day: int
) -> None:
    today = now.astimezone(zone).date()
    for text in (f"{month}月{day}号", f"on {day} {_MONTHS[month - 1]}"):
        found = days(named(text, now, zone), zone)
        assert found is not None
        assert (found[0].month, found[0].day) == (month, day)
        assert timedelta(0) <= today - found[0] < timedelta(days=366)
    planned = days(named(f"我打算{month}月{day}号去", now, zone), zone)
    assert planned is not None
    assert timedelta(0) <= planned[0] - today < timedelta(days=366)


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August")
_MONTHS += ("September", "October", "November", "December")


@given(now=instants, zone=zones, text=st.text(max_size=40))
def test_any_text_resolves_or_names_nothing(now: datetime, zone: ZoneInfo, text: str) -> None:
    span = named(text, now, zone)
    assert span is None or span.start < span.end


@given(
    now=instants,
    zone=zones,
    text=st.lists(
        st.sampled_from(["小明", "吉他", "搬家", "what", "guitar", "咖啡", "?", "吗"]), max_size=6
    ).map("".join),
)
def test_text_without_a_day_names_none(now: datetime, zone: ZoneInfo, text: str) -> None:
    assert named(text, now, zone) is None
