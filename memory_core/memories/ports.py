"""The memory write API's operations as Protocols, each written once.

A caller's port combines the ones it uses (consolidation's `MemoryStore`, the
nightly run's `MemoryPort`), so `Memories.write`'s signature is not restated per
caller. `Memories` satisfies them structurally; `FakeMemories` (fake.py) too.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from memory_core.types import EvidenceRef, Memory, MemoryType

from .outcomes import WriteOutcome


class WritesMemories(Protocol):
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
        subject_id: str | None = ...,
        subject_kind: str | None = ...,
    ) -> WriteOutcome: ...


class EditsMemories(Protocol):
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
