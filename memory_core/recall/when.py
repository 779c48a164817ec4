"""The day or days a wake names, resolved in the chat's time zone (pure).

"5月6号我读的那本书", "上周六", "前天晚上", "last Tuesday", "on 7 May": recall searches
what was said or happened then (dated.py). The rules come from how the two languages
name a day, not from any dataset:

- **absolute**: "2026年5月6日", "5月6号", "5月6日", "7 May", "May 7th", "2026-05-06"; a
  month alone ("5月份", "in May") is the month. Without a year the most recent such day
  not after the wake, unless the wake speaks of a plan (then the next one). Forms that
  read two ways ("7/5", "5.6") name nothing;
- **relative days**: 今天 昨天 前天 大前天 明天 后天, "N天前", "前几天"; today, yesterday,
  the day before yesterday, tomorrow, "3 days ago", "a few days ago";
- **weekdays**: "周五", "星期二", "礼拜天" (the most recent one, today included, unless
  the wake speaks of a plan), "这周三", "上周六", "上上周日", "下周六"; "last Tuesday" (the
  most recent before today), "this Tuesday", "next Tuesday", "on Friday";
- **weeks and months**: 上周 这周 下周 周末 上个月 这个月 下个月; last / this / next week,
  weekend, month: a range of days (weeks start on Monday).

Parts of the day ("晚上", "早上", "tonight") narrow nothing beyond the day: what was
said at 23:50 of a day told about in the morning is still that day. The first name of
a day in the wake wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

CN_DIGITS = dict(zip("〇零一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))
CN_NUM = r"[0-9一二两三四五六七八九十〇零]{1,4}"
WEEKDAY_CN = {
    **dict(zip("一二三四五六日天末", (0, 1, 2, 3, 4, 5, 6, 6, 7), strict=True)),
    **{str(i): i - 1 for i in range(1, 8)},
}
"""Chinese weekday names, Monday 0; 末 (周末) 7: the weekend."""
WEEKDAY_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS_EN = (
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"
)  # fmt: skip
WORD_NUM = {
    **dict(zip(("a", "one", "two", "three", "four", "five"), (1, 1, 2, 3, 4, 5), strict=True)),
    **dict(zip(("six", "seven", "eight", "nine", "ten"), (6, 7, 8, 9, 10), strict=True)),
    "a couple of": 2,
    "couple of": 2,
}
RELATIVE_CN = {
    "大前天": -3,
    "前天": -2,
    "前晚": -2,
    "昨": -1,
    "今": 0,
    "明": 1,
    "后天": 2,
    "大后天": 3,
}
"""Days from today; 昨/今/明 by their first character (昨天, 昨晚, 今早, 明儿)."""
FUTURE = re.compile(
    r"打算|准备|计划|约好|约了|要去|要来|会去|要做|要参加|"
    r"\b(?:will|going to|gonna|plan|planning|planned|next)\b",
    re.IGNORECASE,
)
"""The wake speaks of a plan: a bare weekday or month-day is the next one."""

_MONTH_EN = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DAY_EN = r"(\d{1,2})(?:st|nd|rd|th)?"
_WD_EN = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_N_EN = r"(\d{1,2}|a couple of|couple of|a|one|two|three|four|five|six|seven|eight|nine|ten)"

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")),
    ("cn_date", re.compile(rf"(?:({CN_NUM})年)?({CN_NUM})月({CN_NUM})[日号號]")),
    ("cn_month", re.compile(rf"(?:({CN_NUM})年)?({CN_NUM})月份?(?![0-9一二三四五六七八九十])")),
    ("cn_ago", re.compile(rf"({CN_NUM})天(?:之|以)?前")),
    ("cn_few", re.compile(r"前几天|前两天|这几天|几天前")),
    ("cn_rel", re.compile(r"大前天|大后天|前天|前晚|后天|昨[天日晚儿早]|今[天日晚早儿]|明[天日晚早儿]")),
    ("cn_wd", re.compile(r"(?<![每隔])(上上|上|这|本|下)?(?:个)?(?:周|星期|礼拜|禮拜)([一二三四五六日天末1-7])")),
    ("cn_week", re.compile(r"(上上|上|这|本|下)(?:个)?(?:周|星期|礼拜)")),
    ("cn_mon", re.compile(r"(上上|上|这|本|下)(?:个)?月")),
    ("en_dby", re.compile(r"\bthe day before yesterday\b", re.IGNORECASE)),
    ("en_dat", re.compile(r"\bthe day after tomorrow\b", re.IGNORECASE)),
    ("en_rel", re.compile(r"\b(yesterday|today|tonight|tomorrow|this morning|this evening|this afternoon)\b", re.IGNORECASE)),
    ("en_ago", re.compile(rf"\b{_N_EN} days? ago\b", re.IGNORECASE)),
    ("en_few", re.compile(r"\ba few days ago\b|\bthe other day\b", re.IGNORECASE)),
    ("en_dm", re.compile(rf"\b{_DAY_EN} (?:of )?{_MONTH_EN}\b(?:,? (\d{{4}}))?", re.IGNORECASE)),
    ("en_md", re.compile(rf"\b{_MONTH_EN} {_DAY_EN}\b(?:,? (\d{{4}}))?", re.IGNORECASE)),
    ("en_wd", re.compile(rf"\b(?:(last|this|next|on) )?{_WD_EN}\b", re.IGNORECASE)),
    ("en_span", re.compile(r"\b(last|this|next) (week|weekend|month)\b", re.IGNORECASE)),
    ("en_inmonth", re.compile(rf"\bin {_MONTH_EN}\b", re.IGNORECASE)),
)  # fmt: skip

Days = tuple[date, date]
"""First and last local day, both included."""


@dataclass(frozen=True, slots=True)
class Span:
    """The named days as instants: [start, end) in UTC."""

    start: datetime
    end: datetime
    said: str
    """The words that named them."""


def named(text: str, now: datetime, zone: ZoneInfo) -> Span | None:
    """The day or days `text` names, asked at `now` in a chat living in `zone`."""
    today = now.astimezone(zone).date()
    future = FUTURE.search(text) is not None
    found: list[tuple[int, int, Days, str]] = []
    for rule, pattern in PATTERNS:
        for match in pattern.finditer(text):
            days = _resolve(rule, match, today, future)
            if days is not None:
                found.append((match.start(), -len(match.group(0)), days, match.group(0)))
                break
    if not found:
        return None
    _, _, (first, last), said = min(found)
    return Span(_at(first, zone), _at(last + timedelta(days=1), zone), said)


def _at(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)


def cn_number(text: str) -> int | None:
    """ "12", "十二", "二十三", "两" -> int; None when it is not a number."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        t = CN_DIGITS.get(tens, -1) if tens else 1
        o = CN_DIGITS.get(ones, -1) if ones else 0
        return None if t < 0 or o < 0 else t * 10 + o
    if all(c in CN_DIGITS for c in text):
        value = 0
        for c in text:
            value = value * 10 + CN_DIGITS[c]
        return value
    return None


def _resolve(rule: str, m: re.Match[str], today: date, future: bool) -> Days | None:
    g = m.groups()
    if rule == "iso":
        return _day(int(g[0]), int(g[1]), int(g[2]))
    if rule == "cn_date":
        return _month_day(_num(g[0]), _num(g[1]), _num(g[2]), today, future)
    if rule == "cn_month":
        return _month(_num(g[0]), _num(g[1]), today, future)
    if rule == "cn_ago" or rule == "en_ago":
        n = cn_number(g[0]) if rule == "cn_ago" else _en_number(g[0])
        return None if n is None or n > 400 else _one(today - timedelta(days=n))
    if rule in ("cn_few", "en_few"):
        if m.group(0) == "这几天":
            return today - timedelta(days=3), today
        return today - timedelta(days=6), today - timedelta(days=1)
    if rule == "cn_rel":
        said = m.group(0)
        offset = RELATIVE_CN.get(said, RELATIVE_CN.get(said[0], 0))
        return _one(today + timedelta(days=offset))
    if rule == "cn_wd":
        return _weekday(_CN_WHICH.get(g[0] or ""), WEEKDAY_CN[g[1]], today, future)
    if rule == "cn_week":
        return _week(_CN_WHICH[g[0]], today)
    if rule == "cn_mon":
        return _relative_month(_CN_WHICH[g[0]], today)
    if rule in ("en_dby", "en_dat"):
        return _one(today + timedelta(days=-2 if rule == "en_dby" else 2))
    if rule == "en_rel":
        word = g[0].lower()
        offset = {"yesterday": -1, "tomorrow": 1}.get(word, 0)
        return _one(today + timedelta(days=offset))
    if rule in ("en_dm", "en_md"):
        day, month = (g[0], g[1]) if rule == "en_dm" else (g[1], g[0])
        return _month_day(_num(g[2]), _en_month(month), int(day), today, future)
    if rule == "en_wd":
        which = {"last": -1, "this": 0, "next": 1}.get((g[0] or "").lower())
        return _weekday(which, WEEKDAY_EN.index(g[1].lower()), today, future, strict=True)
    if rule == "en_span":
        which = {"last": -1, "this": 0, "next": 1}[g[0].lower()]
        kind = g[1].lower()
        if kind == "week":
            return _week(which, today)
        if kind == "month":
            return _relative_month(which, today)
        return _weekday(which, 7, today, future, strict=True)
    if rule == "en_inmonth":
        return _month(None, _en_month(g[0]), today, future)
    return None


_CN_WHICH = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1}


def _num(text: str | None) -> int | None:
    return None if text is None else cn_number(text)


def _en_number(text: str) -> int | None:
    return int(text) if text.isdigit() else WORD_NUM.get(text.lower())


def _en_month(text: str) -> int:
    return MONTHS_EN.index(text[:3].lower()) + 1


def _one(day: date) -> Days:
    return day, day


def _day(year: int, month: int, day: int) -> Days | None:
    try:
        return _one(date(year, month, day))
    except ValueError:
        return None


def _month_day(
    year: int | None, month: int | None, day: int | None, today: date, future: bool
) -> Days | None:
    if month is None or day is None:
        return None
    if year is not None:
        return _day(year, month, day)
    # The nearest year in the asked direction where the day exists (29 February).
    step = 1 if future else -1
    for k in range(9):
        found = _day(today.year + step * k, month, day)
        if found is not None and (found[0] >= today if future else found[0] <= today):
            return found
    return None


def _month(year: int | None, month: int | None, today: date, future: bool) -> Days | None:
    if month is None or not 1 <= month <= 12:
        return None
    if year is None:
        year = today.year
        if future and month < today.month:
            year += 1
        elif not future and month > today.month:
            year -= 1
    first = date(year, month, 1)
    return first, _next_month(first) - timedelta(days=1)


def _next_month(first: date) -> date:
    return date(first.year + first.month // 12, first.month % 12 + 1, 1)


def _relative_month(which: int, today: date) -> Days:
    first = today.replace(day=1)
    for _ in range(abs(which)):
        first = _next_month(first) if which > 0 else (first - timedelta(days=1)).replace(day=1)
    return first, _next_month(first) - timedelta(days=1)


def _week(which: int, today: date) -> Days:
    monday = today - timedelta(days=today.weekday()) + timedelta(weeks=which)
    return monday, monday + timedelta(days=6)


def _weekday(
    which: int | None, weekday: int, today: date, future: bool, *, strict: bool = False
) -> Days:
    """`weekday` 0-6 (7: the weekend, Saturday and Sunday) of week `which` (-1 last,
    0 this, 1 next; None: the nearest, past unless `future`). English "last Friday" is
    the most recent before today (`strict`)."""
    length = 1 if weekday == 7 else 0
    weekday = min(weekday, 5) if weekday == 7 else weekday
    if which is None or (strict and which != 0):
        if which == 1 or (which is None and future):
            ahead = (weekday - today.weekday()) % 7 or (7 if which == 1 else 0)
            first = today + timedelta(days=ahead)
        else:
            back = (today.weekday() - weekday) % 7 or (7 if which == -1 else 0)
            first = today - timedelta(days=back)
    else:
        first = today - timedelta(days=today.weekday()) + timedelta(weeks=which, days=weekday)
    return first, first + timedelta(days=length)
