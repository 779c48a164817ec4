"""What consolidation needs from `core.memories`, named by the calls it makes.

The write and edit signatures are `memories.ports`' (written once); the memories
service satisfies this structurally, and tests pass `FakeMemories`.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from memory_core.memories.outcomes import SupersedeOutcome
from memory_core.memories.ports import EditsMemories, WritesMemories
from memory_core.types import Memory


class MemoryStore(WritesMemories, EditsMemories, Protocol):
    async def supersede(
        self, scope: str, old_id: int, new_id: int, *, reason: str, changed_by: str
    ) -> SupersedeOutcome: ...

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


if TYPE_CHECKING:  # the fakes are these ports, checked by pyright
    from memory_core.memories.fake import FakeMemories

    def _conform(memories: FakeMemories) -> MemoryStore:  # pyright: ignore[reportUnusedFunction]
        return memories
