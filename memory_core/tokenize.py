"""Tokenising for the full-text index and every recall stage (pure functions).

Chinese has no spaces, so CJK text is cut into overlapping character bigrams
("小明学吉他" -> 小明 明学 学吉 吉他); a lone CJK character between other
scripts becomes a unigram. Latin words and digit runs are whole tokens. Text is
NFKC-normalised (full-width digits and letters become ASCII) and lower-cased.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

_CJK_RANGES = (
    (0x3040, 0x30FF),  # kana
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x2FA1F),  # CJK extensions B..F, compatibility supplement
)
_WORD = re.compile(r"[^\W_]+")
_CJK_CLASS = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES)
_SCRIPT_RUN = re.compile(f"[{_CJK_CLASS}]+|[^{_CJK_CLASS}]+")
"""A run of CJK characters, or of others: one regex pass instead of `is_cjk` per
character (the archive writer tokenises every message it indexes)."""

NUMERAL_CHARS = frozenset("0123456789零〇一二三四五六七八九十百千万亿两半几")
"""Characters that only say how many or which (digits and Chinese numerals)."""
_CALENDAR_CHARS = frozenset("年月日号点分秒周星期时天礼拜")
"""Units that, next to numerals, only say when ("十月", "三号", "周六")."""


def is_cjk(char: str) -> bool:
    code = ord(char)
    if 0x4E00 <= code <= 0x9FFF:
        return True
    if code < 0x3040:
        return False
    return any(lo <= code <= hi for lo, hi in _CJK_RANGES)


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _runs(text: str) -> Iterable[tuple[bool, str]]:
    """Split into (is_cjk, run) pieces; everything that is not a word char separates."""
    for word in _WORD.findall(normalise(text)):
        for run in _SCRIPT_RUN.findall(word):
            yield is_cjk(run[0]), run


def bigram_tokens(text: str) -> list[str]:
    """Exact-word tokens in order: CJK bigrams (a lone CJK char as itself), latin words."""
    out: list[str] = []
    for cjk, run in _runs(text):
        if not cjk or len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


@lru_cache(maxsize=1 << 14)
def token_set(text: str) -> frozenset[str]:
    return frozenset(bigram_tokens(text))


_WEEKDAY = re.compile(r"周[一二三四五六日天末]")
"""A day of the week names a recurring slot of the week ("每周六" answers "这周六"),
not a count or a calendar date: it stays a content term."""


@lru_cache(maxsize=1 << 16)
def is_numeric(token: str) -> bool:
    """True for tokens that only carry a number or a date ("20", "十月", "三号"); a day
    of the week ("周六") is not one."""
    if token.isdigit():
        return True
    if _WEEKDAY.fullmatch(token):
        return False
    if not any(ch in NUMERAL_CHARS for ch in token) and token not in ("周末", "星期"):
        return False
    return all(ch in NUMERAL_CHARS or ch in _CALENDAR_CHARS for ch in token)


@lru_cache(maxsize=1 << 14)
def numbers(text: str) -> frozenset[str]:
    """The numbers a text states (digit runs, Chinese numeral runs), as written.

    A bare 一 is left out: it is far more often a word part (一起, 一直) than a count.
    Used so that memories differing in a number are never treated as the same
    memory ('撤离率 20%' vs '撤离率 30%')."""
    found: set[str] = set()
    current: list[str] = []
    for char in normalise(text) + " ":
        if (char in NUMERAL_CHARS and char != "几") or (char == "." and current):
            current.append(char)
            continue
        run = "".join(current).rstrip(".")
        if run and run != "一":
            found.add(run)
        current = []
    return frozenset(found)
