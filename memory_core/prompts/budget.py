"""Token budgets for prompt blocks: a cheap, provider-independent estimate.

Chinese costs about one token per character on the tokenizers yuji targets
(DeepSeek, Qwen), latin text about one per four characters; the estimate rounds up
so a block never overshoots its budget on a real tokenizer by much.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

_TRUNCATED = "…"


def _is_wide(ch: str) -> bool:
    code = ord(ch)
    return (
        0x2E80 <= code <= 0x9FFF  # CJK radicals, kana, unified ideographs
        or 0xAC00 <= code <= 0xD7AF  # hangul
        or 0xF900 <= code <= 0xFAFF
        or 0xFF00 <= code <= 0xFFEF  # full-width forms
        or code >= 0x1F000  # emoji and other astral symbols
    )


def estimate_tokens(text: str) -> int:
    wide = sum(1 for ch in text if _is_wide(ch))
    narrow = len(text) - wide
    return wide + math.ceil(narrow / 4)


def truncate_to(text: str, budget: int) -> str:
    """The longest prefix of `text` (plus "…") whose estimate fits `budget`."""
    if estimate_tokens(text) <= budget:
        return text
    if budget <= 1:
        return ""
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if estimate_tokens(text[:mid]) + 1 <= budget:
            low = mid
        else:
            high = mid - 1
    return text[:low].rstrip() + _TRUNCATED


def take_within(lines: Sequence[str], budget: int, *, newest_last: bool = False) -> list[str]:
    """Whole lines in priority order while they fit (each costs its text plus a newline).

    With `newest_last` the lines are chronological and the most recent ones are kept.
    """
    ordered = list(reversed(lines)) if newest_last else list(lines)
    kept: list[str] = []
    used = 0
    for line in ordered:
        cost = estimate_tokens(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return list(reversed(kept)) if newest_last else kept
