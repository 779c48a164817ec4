"""Chinese words for the features that moved a memory's P (`Recalled.why`), for
`/recall`, `/why` and `yuji recall` (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memory_core.types import Band, Memory

from .dense_port import RELATED_LABEL

FEATURE_WORDS: dict[str, str] = {
    "dense": "语义相近",
    "dense_bg": "比一般的记忆更贴近这个问题",
    "dense_latin": "英文问题的语义相近",
    "no_vector": "还没有向量",
    "cover": "问到的词它都说到了",
    "unsaid": "问到的词漏了几个",
    "q_terms": "问题里的词多少",
    "no_terms": "问题里只有名字",
    "names_subject": "说的正是问到的人",
    "names_other": "说的是别人",
    "kind_stated": "给出了问的那类答案",
    "kind_missing": "没有问的那类答案",
    "name_stated": "说出了问的名字",
    "unit_missing": "没有问的那个单位",
    "money_missing": "没说钱数",
    "focus_missing": "没说到问的重点",
    "short": "只是一句很短的话",
    "latin": "问题是英文等拉丁字母写的",
    "ended_asked": "问的是以前",
    "via_link": "与命中的记忆相关",
    "via_successor": "问到的旧情况已被这条更新",
    "dated": "正是问到的那天的事",
    "rerank": "重排模型认为说的就是这件事",
}
"""One phrase per feature of `features.FEATURES` and the reranker's `relevance.RERANK`
(a test holds them equal)."""

ABSENT_WORDS: dict[str, str] = {
    "unsaid": "问到的词没有漏",
    "names_other": "不是在说别人",
    "kind_missing": "给出了问的那类答案",
    "unit_missing": "说了问的那个单位",
    "money_missing": "说了钱数",
    "focus_missing": "说到了问的重点",
    "short": "不只是一句很短的话",
}
"""A feature that lowers P, named for the memory that raised P by lacking it (a
contribution is measured against an unrelated memory, which has the lack)."""


def phrase(name: str, value: float) -> str:
    """The words for one feature's contribution `value` (log-odds)."""
    if value > 0 and name in ABSENT_WORDS:
        return ABSENT_WORDS[name]
    return FEATURE_WORDS.get(name, name)


SHOWN = 3
NOISE = 0.05
"""Contributions smaller than this (in log-odds) moved nothing worth naming."""


def why_words(why: Sequence[tuple[str, float]], limit: int = SHOWN) -> str:
    """`字面命中 +2.0、说的是别人 -1.3`: the features that moved P, strongest first."""
    parts = [
        f"{phrase(name, value)} {value:+.1f}"
        for name, value in sorted(why, key=lambda kv: -abs(kv[1]))
        if abs(value) >= NOISE
    ]
    return "、".join(parts[:limit])


LATIN_ONLY = frozenset({"dense_latin", "latin"})
"""Features that speak of an English (latin-script) question: never named for another."""


def reason_words(top: Sequence[tuple[str, float]], latin: float) -> str:
    """The words of the features that raised P, for a reply's reason line; a feature
    about English questions is named only for one (`latin`: the question's share of
    latin letters)."""
    return "、".join(
        dict.fromkeys(
            phrase(name, v) for name, v in top if v > 0 and (latin >= 0.5 or name not in LATIN_ONLY)
        )
    )


def reason(
    p: float,
    top: Sequence[tuple[str, float]],
    memory: Memory,
    now: datetime,
    band: Band,
    latin: float = 0.0,
) -> str:
    """The reason line of one recalled memory: P, what raised it, its band and, for an
    ended or long-unused memory, when."""
    said = reason_words(top, latin)
    text = f"相关度 {p:.2f}" + (f"：{said}" if said else "")
    if band == "related":
        text = f"{RELATED_LABEL}（{text}）"
    return text + _when(memory, now)


def _when(memory: Memory, now: datetime) -> str:
    if memory.valid_to is not None and memory.valid_to <= now:
        return f"（以前的情况，{memory.valid_to.date().isoformat()} 起不再成立）"
    if memory.status == "cold":
        return "（很久没用到的旧记忆）"
    return ""
