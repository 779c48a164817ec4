"""`/mute` durations: "30m", "2h", "1d", "1h30m", "90s", "2小时", "半小时", "3天", "45".

A bare number means minutes. Anything else is refused with `ValidationError`, so
the command can say so in one line instead of guessing.
"""

from __future__ import annotations

import re
from datetime import timedelta

from memory_core.errors import ValidationError

MAX_MUTE = timedelta(days=365)

_UNITS: dict[str, int] = {
    "s": 1,
    "sec": 1,
    "秒": 1,
    "m": 60,
    "min": 60,
    "分": 60,
    "分钟": 60,
    "h": 3600,
    "hr": 3600,
    "小时": 3600,
    "个小时": 3600,
    "时": 3600,
    "d": 86400,
    "day": 86400,
    "days": 86400,
    "天": 86400,
    "日": 86400,
    "w": 604800,
    "周": 604800,
    "星期": 604800,
}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+|[\u4e00-\u9fff]+)?", re.IGNORECASE)


def parse_duration(raw: str) -> timedelta:
    text = raw.strip().lower().replace(" ", "")
    if text in {"半小时", "半个小时"}:
        return timedelta(minutes=30)
    if not text:
        raise ValidationError("empty duration")
    total = 0.0
    position = 0
    for match in _PART.finditer(text):
        if match.start() != position:
            raise ValidationError(f"bad duration {raw!r}")
        position = match.end()
        number, unit = float(match.group(1)), match.group(2)
        if unit is None:
            if match.end() != len(text) or total:
                raise ValidationError(f"bad duration {raw!r}")
            unit = "m"
        if unit not in _UNITS:
            raise ValidationError(f"unknown unit in {raw!r}")
        total += number * _UNITS[unit]
    if position != len(text):
        raise ValidationError(f"bad duration {raw!r}")
    if total <= 0:
        raise ValidationError("duration must be positive")
    if total > MAX_MUTE.total_seconds():
        raise ValidationError("duration longer than a year")
    return timedelta(seconds=round(total))


def format_duration(delta: timedelta) -> str:
    """Chinese, coarse: "2小时30分钟", "3天", "45秒"."""
    seconds = int(delta.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [
        f"{days}天" if days else "",
        f"{hours}小时" if hours else "",
        f"{minutes}分钟" if minutes and not days else "",
        f"{secs}秒" if secs and not (days or hours) else "",
    ]
    return "".join(parts) or "0秒"
