"""What consolidation needs from `core.memories` (the recall area owns the real one).

Structural: the memories service satisfies this without importing it, and tests can
pass a small fake. Signatures follow the contract in coordination notes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from memory_core.types import EvidenceRef, Memory, MemoryType


class WriteOutcomeLike(Protocol):
    @property
    def memory(self) -> Memory: ...
    @property
    def near_duplicate(self) -> Memory | None: ...
    @property
    def similarity(self) -> float: ...


class SupersedeOutcomeLike(Protocol):
    @property
    def applied(self) -> bool: ...
    @property
    def detail(self) -> str: ...


class MemoryStore(Protocol):
    async def write(
        self,
        scope: str,
        *,
        type: MemoryType,
        subject: str,
        content: str,
        evidence: Sequence[EvidenceRef],
        importance: float = ...,
        confidence: float = ...,
        valid_from: datetime | None = ...,
        valid_to: datetime | None = ...,
        origin: str = ...,
        changed_by: str = ...,
    ) -> WriteOutcomeLike: ...

    async def edit(
        self,
        scope: str,
        memory_id: int,
        *,
        content: str | None = ...,
        subject: str | None = ...,
        importance: float | None = ...,
        confidence: float | None = ...,
        valid_to: datetime | None = ...,
        reason: str,
        changed_by: str,
        evidence: Sequence[EvidenceRef] = ...,
    ) -> Memory: ...

    async def supersede(
        self, scope: str, old_id: int, new_id: int, *, reason: str, changed_by: str
    ) -> SupersedeOutcomeLike: ...

    async def contradict(
        self, scope: str, a_id: int, b_id: int, *, reason: str, changed_by: str
    ) -> None: ...

    async def retract(
        self, scope: str, memory_id: int, *, reason: str, changed_by: str
    ) -> Memory: ...

    async def add_alias(self, scope: str, alias: str, canonical: str) -> None: ...

    async def get(self, scope: str, memory_id: int) -> Memory: ...

    async def search(
        self, scope: str, text: str, *, limit: int = ..., now: datetime | None = ...
    ) -> list[Memory]: ...
