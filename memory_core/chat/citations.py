"""Citation markers: how the model says which injected memory it actually used.

The prompt tells the model the exact syntax (`prompts.chat.marker`). Markers are removed
before anything is sent, and the ids they name are credited (usage, not retrieval),
but only ids that were injected into that very turn: a marker naming any other id
is stripped and ignored. Models drift from the syntax (full-width brackets, `mem`,
`记忆`, several ids in one marker), so stripping is forgiving; crediting is strict.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from memory_core.prompts.chat import MARKER_EXAMPLE as MARKER_EXAMPLE
from memory_core.prompts.chat import marker as marker

_OPEN = r"(?:\[\[|【【|［［|\[|【|［|⟦)"
_CLOSE = r"(?:\]\]|】】|］］|\]|】|］|⟧)"
_OPEN2 = r"(?:\[\[|【【|［［|⟦)"
_CLOSE2 = r"(?:\]\]|】】|］］|⟧)"
_TAG = r"(?:m|mem|memory|记忆|#)"
_ID = r"[#＃]?\d+"
"""The prompt lists memories as `#12`, so models borrow the hash: `[[m:#12]]`."""
_SEP = r"(?:\s*[,，、/]\s*|\s+)(?:(?:m|mem|记忆)\s*[:：]?\s*)?"
_IDS = rf"{_ID}(?:{_SEP}{_ID})*"
_MARKER = re.compile(
    rf"(?<!\s)\s*(?:{_OPEN}\s*{_TAG}\s*[:：#]?\s*(?P<ids>{_IDS})\s*{_CLOSE}"
    rf"|{_OPEN2}\s*(?P<bare>{_IDS})\s*{_CLOSE2})",
    re.IGNORECASE,
)
"""A tagged marker in any bracket, or bare ids in double brackets (`[[12]]`); a
single-bracketed bare number (`[3]`) is ordinary text. A match starts only where
whitespace does (the lookbehind), so long runs of spaces cost linear time."""
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class Cited:
    text: str
    """The reply with every marker removed."""
    used_ids: tuple[int, ...]
    """Injected ids the model cited, first mention first, each once."""


def strip_citations(text: str, injected_ids: Collection[int]) -> Cited:
    allowed = set(injected_ids)
    used: list[int] = []
    for match in _MARKER.finditer(text):
        for raw in _DIGITS.findall(match.group("ids") or match.group("bare")):
            memory_id = int(raw)
            if memory_id in allowed and memory_id not in used:
                used.append(memory_id)
    cleaned = _MARKER.sub("", text)
    cleaned = re.sub(r"(?<![ \t])[ \t]+\n", "\n", cleaned).strip()
    return Cited(text=cleaned, used_ids=tuple(used))
