"""What recall reuses about a chat between questions (its size, names, term
frequencies, which ids are visible, whether it has replaced versions).

Each entry lives `ttl_s` seconds; a write through core.memories drops the chat's
entries at once (`invalidate`), so a write by another process (the CLI) shows
within the TTL. Nothing here decides what is injected: the visibility rule is
checked again on whatever a stage returns.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage import MemoryRepo

K = TypeVar("K")
V = TypeVar("V")
Names = tuple[int, list[str], dict[str, str]]
"""A chat's memory count, distinct subjects and alias -> canonical map."""


class ChatCache:
    def __init__(self, repo: MemoryRepo, ttl_s: float) -> None:
        self._repo = repo
        self.ttl_s = ttl_s
        self._names: dict[str, tuple[float, Names]] = {}
        self._df: dict[str, dict[str, int]] = {}
        """Per chat: document frequency of each term a question asked about so far (0
        when no memory holds it); dropped with the chat's names."""
        self._ids: dict[tuple[str, bool], tuple[float, frozenset[int]]] = {}
        self._replaced: dict[str, tuple[float, bool]] = {}

    def invalidate(self, scope: str) -> None:
        self._names.pop(scope, None)
        self._df.pop(scope, None)
        self._ids.pop((scope, False), None)
        self._ids.pop((scope, True), None)
        self._replaced.pop(scope, None)

    def clear(self) -> None:
        self._names.clear()
        self._df.clear()
        self._ids.clear()
        self._replaced.clear()

    def fresh_names(self, scope: str) -> Names | None:
        """The chat's names when they are held and fresh (no connection needed)."""
        return _fresh(self._names.get(scope))

    async def names(self, conn: AsyncConnection, scope: str) -> Names:
        hit = self.fresh_names(scope)
        if hit is not None:
            return hit
        self._df.pop(scope, None)  # counted against the old names' statistics
        return self._keep(self._names, scope, await self._repo.scope_names(scope, conn=conn))

    async def frequencies(
        self, conn: AsyncConnection, scope: str, wanted: set[str]
    ) -> dict[str, int]:
        """The document frequencies of `wanted` terms this chat's memories hold (absent
        terms left out); only terms not asked about before go to the index."""
        known = self._df.setdefault(scope, {})
        missing = wanted - known.keys()
        if missing:
            fetched = await self._repo.document_frequencies(scope, missing, conn=conn)
            for term in missing:
                known[term] = fetched.get(term, 0)
        return {term: known[term] for term in wanted if known[term] > 0}

    async def has_replaced(self, conn: AsyncConnection, scope: str) -> bool:
        """Whether any memory of the chat was replaced by a newer version."""
        hit = _fresh(self._replaced.get(scope))
        if hit is not None:
            return hit
        return self._keep(self._replaced, scope, await self._repo.has_replaced(scope, conn=conn))

    async def visible_ids(
        self, conn: AsyncConnection, scope: str, now: datetime, retrospective: bool
    ) -> frozenset[int]:
        """The ids dense retrieval may score. Safe to reuse: every candidate is read
        again and checked at `now` before it is weighed. The same object until it
        expires, so the vector index can key its selection on it."""
        key = (scope, retrospective)
        hit = _fresh(self._ids.get(key))
        if hit is not None:
            return hit
        ids = await self._repo.visible_ids(scope, now, retrospective=retrospective, conn=conn)
        return self._keep(self._ids, key, frozenset(ids))

    def _keep(self, store: dict[K, tuple[float, V]], key: K, value: V) -> V:
        store[key] = (time.monotonic() + self.ttl_s, value)
        return value


def _fresh(entry: tuple[float, V] | None) -> V | None:
    """The entry's value while it has not expired."""
    if entry is None or entry[0] <= time.monotonic():
        return None
    return entry[1]
