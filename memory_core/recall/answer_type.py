"""What kind of answer a question wants, and whether a memory can give it (pure).

A question asking "how much / how many / which day / what is it called" can only be
answered by a memory that states a number, a date or a name. A memory about the
same thing without one is not an answer ("骰子工坊几点关门" is not answered by
"骰子工坊的包间有投影"), so recall stays silent rather than inject it.
"""

from __future__ import annotations

import re
from enum import Enum

from .tokenize import normalise

_NUM = r"(?:\d+(?:\.\d+)?|[零〇一二三四五六七八九十百千万两半几]+)"


class Wants(Enum):
    ANY = "any"
    MONEY = "money"
    COUNT = "count"
    TIME = "time"
    DATE = "date"
    NAME = "name"


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
        Wants.COUNT,
        re.compile(r"(?:多少|几)(?!点|号|月|天前|时|乎)|how many|how old|how long|how much"),
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


def wants(question: str) -> Wants:
    text = normalise(question)
    for kind, pattern in _QUESTIONS:
        if pattern.search(text):
            return kind
    return Wants.ANY


def can_answer(kind: Wants, memory_text: str) -> bool:
    if kind is Wants.ANY:
        return True
    text = normalise(memory_text)
    pattern = {
        Wants.MONEY: _MONEY,
        Wants.TIME: _TIME,
        Wants.DATE: _DATE,
        Wants.NAME: _NAME,
        Wants.COUNT: _COUNT,
    }[kind]
    return pattern.search(text) is not None
