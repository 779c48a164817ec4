"""What kind of answer a question wants, and whether a memory can give it (pure).

A question asking "how much / how many / which day / what is it called" can only be
answered by a memory that states a number, a date or a name. A memory about the
same thing without one is not an answer ("骰子工坊几点关门" is not answered by
"骰子工坊的包间有投影"), so recall stays silent rather than inject it.

Quantities are refined by the unit the question names: "考了多少分" needs a number
of points, "一天吃多少克" a weight, "几岁" an age, "多久" a duration; a date is
never a quantity ("11月10日给团子买了驱虫药" does not say how many grams or how
often), and a clock time or a date never answers "how many".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from .tokenize import is_cjk, normalise

_NUM = r"(?:\d+(?:\.\d+)?|[零〇一二三四五六七八九十百千万两半几]+)"


class Wants(Enum):
    ANY = "any"
    MONEY = "money"
    COUNT = "count"
    TIME = "time"
    DATE = "date"
    NAME = "name"
    DURATION = "duration"


@dataclass(frozen=True, slots=True)
class Asked:
    """The kind of answer a question wants, with the unit of a quantity it names
    ("多少分" -> COUNT in 分; "几岁" -> COUNT in 岁), "" when it names none."""

    kind: Wants
    unit: str = ""


_QUESTIONS: tuple[tuple[Wants, re.Pattern[str]], ...] = (
    (
        Wants.MONEY,
        re.compile(
            r"多少钱|几块|几毛|什么价|啥价|多贵|价格|价钱|how much (?:did|does|do|is|was|money|it cost)"
        ),
    ),
    (Wants.TIME, re.compile(r"几点|什么时间|what time")),
    (
        Wants.DATE,
        re.compile(
            r"哪天|哪一天|几号|几月|哪年|哪一年|什么时候|啥时候|啥时|何时|什么日子|星期几|周几|礼拜几"
            r"|\bwhen\b|what date|which day|what year|which year|what month"
        ),
    ),
    (
        Wants.NAME,
        re.compile(
            r"叫啥|叫什么|叫什么名|什么名字|啥名|名字是|what(?:'s| is) (?:the |his |her |their )?name"
        ),
    ),
    (
        Wants.DURATION,
        re.compile(
            r"多久|多长时间|多长时候|(?:多少|几)(?:个)?(?:小时|钟头|分钟|天(?!前)|周|星期|礼拜|个月|年)"
            r"|how long|how often"
        ),
    ),
    (
        Wants.COUNT,
        re.compile(r"(?:多少|几)(?!点|号|月|天前|时|乎)|how many|how old|how much"),
    ),
)

_MONEY = re.compile(
    _NUM
    + r"\s*(?:块|元|毛|万|千|刀|美元|新币|rmb|k\b)|[¥$￥€£]\s*\d|\d\s*(?:dollars|bucks|yuan|euros?)|免费|free"
)
_TIME = re.compile(
    _NUM
    + r"\s*(?:点|:|：)|\d{1,2}:\d{2}|凌晨|早上|上午|中午|下午|晚上|傍晚|半夜|\b(?:am|pm)\b|o'clock|noon|midnight"
)
_CLOCK = re.compile(
    r"(?:\d+|[零〇一二三四五六七八九十两]+)\s*点(?!儿)|\d{1,2}[:：]\d{2}|\b(?:am|pm)\b|o'clock|noon|midnight"
)
"""A clock time: what "几点" asks for ("下午" or "晚上" alone does not say it)."""
_DATE = re.compile(
    _NUM + r"\s*(?:年|月|日|号)|周[一二三四五六日天末]|星期|礼拜|今天|明天|昨天|前天|后天"
    r"|上周|下周|这周|本周|上个月|下个月|月底|月初|年底|年初|春节|过年|国庆|中秋|元旦|五一|端午|清明|圣诞|生日"
    r"|\b(?:19|20)\d\d\b|\b(?:january|february|march|april|may|june|july|august|september|october|november|december)\b"
    r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|today|tomorrow|weekend|week|month|year)\b"
)
_NAME = re.compile(r"叫|名|称|号称|昵称|\bnamed?\b|\bcalled\b")
_COUNT = re.compile(
    r"\d|[一二三四五六七八九十百千万两半]|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|dozen|several|few|many)\b"
)


UNIT_FAMILIES: tuple[frozenset[str], ...] = (
    frozenset({"克", "斤", "公斤", "千克", "两", "kg", "g"}),
    frozenset({"米", "公里", "千米", "里", "km"}),
    frozenset({"岁"}),
    frozenset({"分"}),
    frozenset({"次", "回", "遍", "趟"}),
    frozenset({"人", "个人", "位", "名"}),
    frozenset({"只", "头", "条"}),
    frozenset({"本", "部", "集", "章"}),
    frozenset({"关", "级", "层", "章"}),
    frozenset({"联", "针"}),
    frozenset({"杯", "瓶", "碗", "罐", "袋", "包", "盒", "箱"}),
    frozenset({"套", "件", "台", "辆", "张", "颗", "粒", "片", "根", "块"}),
    frozenset({"楼", "层"}),
    frozenset({"%", "成", "折"}),
)
"""Units a question can name after 多少/几, each with the units that answer it."""
_UNITS = sorted({u for family in UNIT_FAMILIES for u in family}, key=len, reverse=True)
_ASKED_UNIT = re.compile(
    r"(?:多少|几|第几)\s*(?:个)?(" + "|".join(re.escape(u) for u in _UNITS) + r")(?![a-z])"
)
_RATIO_ASKED = re.compile(r"(?:胜率|概率|比例|百分之|几成|打几折|涨了多少|降了多少)")
_DURATION = re.compile(
    _NUM
    + r"\s*(?:个)?\s*(?:小时|钟头|分钟|秒钟?|天|周(?![一二三四五六日天末])|星期(?![一二三四五六日天])"
    r"|礼拜(?![一二三四五六日天])|个月|年(?!\d|[零〇一二三四五六七八九十]+月)|次|回|遍|趟)"
    r"|每(?:天|日|晚|周|星期|礼拜|个?月|年)|天天|一直|从来|半年|半天|\d+\s*(?:days?|weeks?|months?|years?|hours?|minutes?|times)"
    r"|\b(?:daily|weekly|monthly|yearly|every|since|for (?:a|an|one|two|three|several|many|\d+))\b"
)
_DATE_OR_TIME = re.compile(
    r"(?:\d{2,4}|[零〇一二三四五六七八九十]+)\s*年\s*(?:\d+|[零〇一二三四五六七八九十]+)\s*月"
    r"|(?:\d+|[零〇一二三四五六七八九十]+)\s*月\s*(?:\d+|[零〇一二三四五六七八九十]+)\s*(?:日|号)?"
    r"|(?:\d+|[零〇一二三四五六七八九十]+)\s*(?:日|号)"
    r"|(?:\d+|[零〇一二三四五六七八九十两]+)\s*点(?:半|\d+分?|[零〇一二三四五六七八九十]+分?)?"
    r"|\d{1,2}[:：]\d{2}|[一二三四五六七八九十]+月(?:份|初|中|底)?|(?:19|20)\d\d\s*年?"
    r"|[周星期礼拜][一二三四五六日天]|一点(?:点|儿)?|一起|一直|一下|一样|一般|一定|一边|一些|一次性|万一|之一|唯一|统一|第一"
)
_CJK_QUANTITY = re.compile(_NUM + r"\s*(?:[^\W\d_]|%)")


def asked(question: str) -> Asked:
    """What kind of answer `question` wants, and the unit of the quantity it names."""
    text = normalise(question)
    for kind, pattern in _QUESTIONS:
        if pattern.search(text):
            unit = ""
            if kind is Wants.COUNT:
                found = _ASKED_UNIT.search(text)
                if found is not None:
                    unit = found.group(1)
                elif _RATIO_ASKED.search(text):
                    unit = "%"
            elif kind is Wants.TIME and "几点" in text:
                unit = "点"
            return Asked(kind, unit)
    return Asked(Wants.ANY)


def wants(question: str) -> Wants:
    return asked(question).kind


def _compatible(unit: str) -> frozenset[str]:
    family: set[str] = {unit}
    for units in UNIT_FAMILIES:
        if unit in units:
            family |= units
    return frozenset(family)


def states_quantity(memory_text: str, unit: str = "") -> bool:
    """True when the text states a number that is not a date or clock time; with
    `unit`, a number of that unit or one of its family ("七斤二两" answers 多少克)."""
    text = normalise(memory_text)
    if unit:
        units = sorted(_compatible(unit), key=len, reverse=True)
        pattern = _NUM + r"\s*(?:个)?\s*(?:" + "|".join(re.escape(u) for u in units) + ")"
        if unit == "%":
            pattern += r"|百分之|\d\s*%"
        return any(
            not _inside_date(text, found.start(), found.end())
            for found in re.finditer(pattern, text)
        )
    stripped = _DATE_OR_TIME.sub(" ", text)
    if any(c.isdigit() for c in stripped):
        return True
    return _CJK_QUANTITY.search(stripped) is not None or _COUNT_WORDS.search(stripped) is not None


_COUNT_WORDS = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|dozen|several|few|many)\b"
)


def _inside_date(text: str, start: int, end: int) -> bool:
    return any(
        d.start() <= start and end <= d.end() and (d.end() - d.start()) > (end - start)
        for d in _DATE_OR_TIME.finditer(text)
    )


def can_answer(kind: Wants | Asked, memory_text: str) -> bool:
    """Whether the memory states the kind of answer asked (any memory for ANY)."""
    ask = kind if isinstance(kind, Asked) else Asked(kind)
    if ask.kind is Wants.ANY:
        return True
    text = normalise(memory_text)
    if ask.kind is Wants.COUNT:
        if not any(is_cjk(c) for c in text):
            return _COUNT.search(text) is not None
        return states_quantity(text, ask.unit)
    if ask.kind is Wants.DURATION:
        if not any(is_cjk(c) for c in text):  # "how long/often": any number or date
            return any(p.search(text) is not None for p in (_COUNT, _DURATION, _DATE))
        return _DURATION.search(_DATE_OR_TIME.sub(" ", text)) is not None
    if ask.kind is Wants.TIME and ask.unit == "点":
        return _CLOCK.search(text) is not None
    pattern = {
        Wants.MONEY: _MONEY,
        Wants.TIME: _TIME,
        Wants.DATE: _DATE,
        Wants.NAME: _NAME,
    }[ask.kind]
    return pattern.search(text) is not None
