from __future__ import annotations

from datetime import timedelta

import pytest

from memory_core.chat.duration import format_duration, parse_duration
from memory_core.errors import ValidationError


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("30m", timedelta(minutes=30)),
        ("2h", timedelta(hours=2)),
        ("1d", timedelta(days=1)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("90s", timedelta(seconds=90)),
        ("45", timedelta(minutes=45)),
        ("1.5h", timedelta(minutes=90)),
        ("2小时", timedelta(hours=2)),
        ("2小时30分钟", timedelta(hours=2, minutes=30)),
        ("半小时", timedelta(minutes=30)),
        ("3天", timedelta(days=3)),
        ("1周", timedelta(weeks=1)),
        (" 10 MIN ", timedelta(minutes=10)),
    ],
)
def test_accepted_durations(raw: str, expected: timedelta) -> None:
    assert parse_duration(raw) == expected


@pytest.mark.parametrize("raw", ["", "abc", "0", "-5m", "5x", "2h garbage", "400d", "1h30", "m5"])
def test_refused_durations(raw: str) -> None:
    with pytest.raises(ValidationError):
        parse_duration(raw)


def test_format_duration_is_coarse_chinese() -> None:
    assert format_duration(timedelta(hours=2, minutes=30)) == "2小时30分钟"
    assert format_duration(timedelta(days=3, minutes=5)) == "3天"
    assert format_duration(timedelta(seconds=45)) == "45秒"
