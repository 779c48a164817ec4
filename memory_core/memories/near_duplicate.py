"""The near-duplicate hint of the write path (pure).

A new memory is always inserted; this only finds the most similar recent memory
of the same chat and type so the caller can edit that one instead. Two texts that
state different numbers are never near-duplicates: folding '撤离率 20%' into
'撤离率 30%' would forge a memory.
"""

from __future__ import annotations

from collections import Counter, deque

from memory_core.tokenize import numbers, token_set


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


def similarity(new_text: str, old_text: str) -> float:
    """Bigram Dice, or 0.0 when the two texts state different numbers."""
    if numbers(new_text) != numbers(old_text):
        return 0.0
    return dice(token_set(new_text), token_set(old_text))


class WindowIndex:
    """The latest `size` memories of one chat and type, indexed by bigram, so a batch
    write can find near-duplicates without comparing against every one of them."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._order: deque[int] = deque()
        self._docs: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
        self._postings: dict[str, set[int]] = {}

    def add(self, memory_id: int, text: str) -> None:
        tokens = token_set(text)
        self._docs[memory_id] = (tokens, numbers(text))
        self._order.append(memory_id)
        for token in tokens:
            self._postings.setdefault(token, set()).add(memory_id)
        while len(self._order) > self._size:
            old = self._order.popleft()
            old_tokens, _ = self._docs.pop(old)
            for token in old_tokens:
                ids = self._postings[token]
                ids.discard(old)
                if not ids:
                    del self._postings[token]

    def best(self, text: str, threshold: float) -> tuple[int, float] | None:
        tokens = token_set(text)
        wanted = numbers(text)
        shared: Counter[int] = Counter()
        for token in tokens:
            shared.update(self._postings.get(token, ()))
        best: tuple[int, float] | None = None
        for memory_id, overlap in shared.items():
            other, other_numbers = self._docs[memory_id]
            score = 2 * overlap / (len(tokens) + len(other))
            if score < threshold or other_numbers != wanted:
                continue
            if best is None or score > best[1] or (score == best[1] and memory_id > best[0]):
                best = (memory_id, score)
        return best
