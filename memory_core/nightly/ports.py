"""What the nightly run needs from the other services, as small protocols.

The real ones are `core.memories` and `core.archive`; naming only the calls used
here keeps the nightly package testable and its dependencies visible.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from memory_core.types import EvidenceRef, Memory, MemoryStatus, MemoryType


class WrittenMemory(Protocol):
    @property
    def memory(self) -> Memory: ...


class MemoryPort(Protocol):
    async def write(
        self,
        scope: str,
        *,
        type: MemoryType,
        subject: str,
        content: str,
        evidence: Sequence[EvidenceRef],
        importance: float = 0.5,
        confidence: float = 0.8,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        origin: str = "model",
        changed_by: str = "model",
    ) -> WrittenMemory: ...

    async def edit(
        self,
        scope: str,
        memory_id: int,
        *,
        content: str | None = None,
        subject: str | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        valid_to: datetime | None = None,
        reason: str,
        changed_by: str,
        evidence: Sequence[EvidenceRef] = (),
    ) -> Memory: ...

    async def set_status(
        self, scope: str, memory_id: int, status: MemoryStatus, *, reason: str, changed_by: str
    ) -> Memory: ...

    async def newest(
        self,
        scope: str,
        *,
        types: Sequence[MemoryType] | None = None,
        status: MemoryStatus | None = "active",
        limit: int = 100,
    ) -> list[Memory]: ...


class ArchivePort(Protocol):
    async def scopes(self) -> list[str]: ...
