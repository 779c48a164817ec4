"""The near-duplicate hint of the write path (pure).

A new memory is always inserted; this only finds the most similar recent memory
of the same chat and type so the caller can edit that one instead. Two texts that
state different numbers are never near-duplicates: folding '撤离率 20%' into
'撤离率 30%' would forge a memory.
"""

from __future__ import annotations

from collections.abc import Iterable

from memory_core.recall.tokenize import numbers, token_set


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


def similarity(new_text: str, old_text: str) -> float:
    """Bigram Dice, or 0.0 when the two texts state different numbers."""
    if numbers(new_text) != numbers(old_text):
        return 0.0
    return dice(token_set(new_text), token_set(old_text))


def best_match(
    new_text: str, candidates: Iterable[tuple[int, str]], threshold: float
) -> tuple[int, float] | None:
    """(id, similarity) of the most similar candidate at or above `threshold`."""
    new_tokens = token_set(new_text)
    new_numbers = numbers(new_text)
    best: tuple[int, float] | None = None
    for memory_id, text in candidates:
        if numbers(text) != new_numbers:
            continue
        score = dice(new_tokens, token_set(text))
        if score >= threshold and (best is None or score > best[1]):
            best = (memory_id, score)
    return best
