"""The console's pure parts: token and CSRF checks, login throttling, sessions, chart
buckets, bar heights, card diffs and a member's current name."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from memory_core.console import LoginThrottle, Sessions, csrf_matches, token_matches
from memory_core.console.pure import bar_heights, current_name, day_buckets, line_diff
from memory_core.console.tunables import parse_tunable, shown
from memory_core.storage import PersonName
from memory_core.types import NameSource

SHANGHAI = ZoneInfo("Asia/Shanghai")


class Ticks:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_token_matches_only_the_exact_nonempty_token() -> None:
    assert token_matches("abc", "abc")
    assert not token_matches("abd", "abc")
    assert not token_matches("", "")
    assert not token_matches("abc", "")
    assert not token_matches("令牌", "abc")


def test_throttle_blocks_after_the_allowed_failures_until_the_oldest_ages_out() -> None:
    ticks = Ticks()
    throttle = LoginThrottle(allowed=3, window_s=60, now=ticks)
    for _ in range(3):
        assert throttle.blocked_for("a") == 0
        throttle.failed("a")
        ticks.t += 1
    assert throttle.blocked_for("a") == 57  # the first failure (t=1000) ages out at 1060
    assert throttle.blocked_for("b") == 0
    ticks.t += 57
    assert throttle.blocked_for("a") == 0


def test_sessions_expire_and_close() -> None:
    ticks = Ticks()
    sessions = Sessions(ttl_s=10, now=ticks)
    one = sessions.open()
    assert sessions.get(one.id) == one
    assert csrf_matches(one, one.csrf)
    assert not csrf_matches(one, "")
    assert not csrf_matches(one, one.id)
    ticks.t += 10
    assert sessions.get(one.id) is None
    two = sessions.open()
    sessions.close(two.id)
    assert sessions.get(two.id) is None
    assert sessions.get("") is None


def test_day_buckets_use_the_local_day_of_each_hour() -> None:
    hourly = {
        "2026-11-29 15": 2,  # 23:00 on the 29th in Shanghai
        "2026-11-29 16": 3,  # 00:00 on the 30th in Shanghai
        "2026-10-01 00": 9,  # outside the window
        "garbage": 5,
    }
    assert day_buckets(hourly, date(2026, 11, 30), 3, SHANGHAI) == [0, 2, 3]


@given(
    st.dictionaries(
        st.datetimes(
            min_value=datetime(2026, 1, 1),  # noqa: DTZ001 (naive bounds: hypothesis needs them)
            max_value=datetime(2026, 3, 1),  # noqa: DTZ001
        ),
        st.integers(0, 50),
    )
)
def test_day_buckets_never_lose_a_count_inside_the_window(counts: dict[datetime, int]) -> None:
    hourly: dict[str, int] = {}
    for instant, n in counts.items():
        key = f"{instant:%Y-%m-%d %H}"
        hourly[key] = hourly.get(key, 0) + n
    buckets = day_buckets(hourly, date(2026, 3, 2), 70, SHANGHAI)  # 2025-12-23 .. 2026-03-02
    assert sum(buckets) == sum(hourly.values())


@given(st.lists(st.integers(0, 10_000), max_size=40))
def test_bar_heights_stay_in_range_and_keep_order(values: list[int]) -> None:
    heights = bar_heights(values, 40)
    assert len(heights) == len(values)
    assert all(0 <= h <= 40 for h in heights)
    assert all((h == 0) == (v == 0) for h, v in zip(heights, values, strict=True))
    pairs = list(zip(values, heights, strict=True))
    assert all(ha <= hb for a, ha in pairs for b, hb in pairs if a <= b)


def test_line_diff_marks_added_removed_and_kept_lines() -> None:
    assert line_diff("a\nb", "a\nc") == [(" ", "a"), ("-", "b"), ("+", "c")]
    assert line_diff("", "x") == [("+", "x")]


def test_tunables_parse_like_settings_and_secrets_are_masked() -> None:
    assert parse_tunable("recall_limit", " 3 ") == 3
    assert parse_tunable("nicknames", "小鱼, 大肥鱼") == ["小鱼", "大肥鱼"]
    assert shown("llm_api_key", "sk-secret") == "***"
    assert shown("console_token", "") == "（未设置）"
    assert shown("nicknames", ("a", "b")) == "a, b"
    assert shown("attachment_allow_private", False) == "false"  # as .env writes it


def _name(name: str, source: NameSource, first: int, last: int) -> PersonName:
    def at(day: int) -> datetime:
        return datetime(2026, 11, day, tzinfo=SHANGHAI)

    return PersonName(1, "group:1", name, name, source, at(first), at(last))


def test_a_members_current_name_is_their_own_latest_then_an_alias_then_a_mention() -> None:
    own = [_name("林林", "card", 5, 6), _name("小林", "card", 1, 4)]
    given = [_name("林哥", "alias", 1, 9), _name("老林", "mention", 1, 10)]
    assert current_name([*given, *own]) == "林林"  # others' names never win over their own
    assert current_name(given) == "林哥"
    assert current_name(given[1:]) == "老林"
    assert current_name([]) == ""
