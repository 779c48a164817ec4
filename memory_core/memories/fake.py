"""`FakeMemories`: the memory ports (consolidation's, the nightly run's, chat's) in a dict.

For tests of a caller that should not need a database: it keeps the rules a caller
can observe (scoped ids, evidence required, versions count up, retracted stays
retracted) and none of the storage. Use the real `Memories` to test the write rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from memory_core.clock import Clock
from memory_core.errors import EvidenceRequired, NotFound, ValidationError
from memory_core.types import EvidenceRef, Memory, MemoryStatus, MemoryType

from .outcomes import SupersedeOutcome, WriteOutcome


class FakeMemories:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.memories: dict[int, Memory] = {}
        self.evidence: dict[int, tuple[EvidenceRef, ...]] = {}
        self.contradictions: set[tuple[int, int]] = set()
        self.aliases: dict[tuple[str, str], str] = {}
        self.credited: list[tuple[str, int, datetime]] = []

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
        subject_id: str | None = None,
        subject_kind: str | None = None,
    ) -> WriteOutcome:
        if not evidence:
            raise EvidenceRequired("a memory needs evidence")
        if not content.strip():
            raise ValidationError("memory content must not be empty")
        now = self.clock.now()
        memory = Memory(
            id=len(self.memories) + 1,
            scope=scope,
            type=type,
            subject=subject,
            content=content.strip(),
            importance=importance,
            confidence=confidence,
            status="active",
            valid_from=valid_from,
            valid_to=valid_to,
            version=1,
            origin=origin,
            created_at=now,
            updated_at=now,
            last_accessed_at=None,
            hit_count=0,
            pinned=False,
            starred=False,
            # The fake knows no persons: an id given is taken as the member's.
            subject_kind="person" if subject_id else None,
            subject_person=subject_id,
        )
        self.memories[memory.id] = memory
        self.evidence[memory.id] = tuple(evidence)
        return WriteOutcome(memory)

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
    ) -> Memory:
        old = await self.get(scope, memory_id)
        if old.status == "retracted":
            raise ValidationError(f"memory #{memory_id} is retracted")
        changes = {
            name: value
            for name, value in (
                ("content", content),
                ("subject", subject),
                ("importance", importance),
                ("confidence", confidence),
                ("valid_to", valid_to),
            )
            if value is not None
        }
        return self._store(replace(old, **changes), evidence)

    async def set_status(
        self, scope: str, memory_id: int, status: MemoryStatus, *, reason: str, changed_by: str
    ) -> Memory:
        old = await self.get(scope, memory_id)
        if old.status == "retracted" and status != "retracted":
            raise ValidationError(f"memory #{memory_id} is retracted")
        return self._store(replace(old, status=status))

    async def retract(self, scope: str, memory_id: int, *, reason: str, changed_by: str) -> Memory:
        return await self.set_status(
            scope, memory_id, "retracted", reason=reason, changed_by=changed_by
        )

    async def supersede(
        self, scope: str, old_id: int, new_id: int, *, reason: str, changed_by: str
    ) -> SupersedeOutcome:
        old, new = await self.get(scope, old_id), await self.get(scope, new_id)
        self._store(replace(old, valid_to=new.valid_from or self.clock.now()))
        return SupersedeOutcome(applied=True, detail=f"#{old_id} superseded by #{new_id}")

    async def contradict(
        self, scope: str, a_id: int, b_id: int, *, reason: str, changed_by: str
    ) -> None:
        await self.get(scope, a_id)
        await self.get(scope, b_id)
        self.contradictions.add((min(a_id, b_id), max(a_id, b_id)))

    async def add_alias(self, scope: str, alias: str, canonical: str) -> None:
        self.aliases[(scope, alias.strip())] = canonical.strip()

    async def get(self, scope: str, memory_id: int) -> Memory:
        memory = self.memories.get(memory_id)
        if memory is None or memory.scope != scope:
            raise NotFound(f"memory #{memory_id} not found")
        return memory

    async def get_many(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        return [m for i in ids if (m := self.memories.get(i)) is not None and m.scope == scope]

    async def search(
        self, scope: str, text: str, *, limit: int = 10, now: datetime | None = None
    ) -> list[Memory]:
        words = set(text.split())
        found = [
            m
            for m in self.memories.values()
            if m.scope == scope and m.status == "active" and words & set(m.content.split())
        ]
        return found[:limit]

    async def newest(
        self,
        scope: str,
        *,
        types: Sequence[MemoryType] | None = None,
        status: MemoryStatus | None = "active",
        limit: int = 100,
    ) -> list[Memory]:
        found = [
            m
            for m in reversed(self.memories.values())
            if m.scope == scope
            and (types is None or m.type in types)
            and (status is None or m.status == status)
        ]
        return found[:limit]

    async def credit(self, scope: str, ids: Sequence[int], at: datetime) -> None:
        for memory in await self.get_many(scope, ids):
            self.credited.append((scope, memory.id, at))
            self.memories[memory.id] = replace(
                memory, hit_count=memory.hit_count + 1, last_accessed_at=at
            )

    def _store(self, memory: Memory, evidence: Sequence[EvidenceRef] = ()) -> Memory:
        stored = replace(memory, version=memory.version + 1, updated_at=self.clock.now())
        self.memories[memory.id] = stored
        self.evidence[memory.id] += tuple(evidence)
        return stored
