"""What the nightly run needs from the other services, as small protocols.

The real ones are `core.memories` and `core.archive`; naming only the calls used
here keeps the nightly package testable and its dependencies visible. The write
and edit signatures are `memories.ports`' (written once); `FakeMemories` is the fake.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from memory_core.memories.ports import EditsMemories, WritesMemories
from memory_core.types import Memory, MemoryStatus, MemoryType


class MemoryPort(WritesMemories, EditsMemories, Protocol):
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


class ChatScopes(Protocol):
    """Every chat with archived messages (`core.archive`; tests pass `FakeScopes`)."""

    async def scopes(self) -> list[str]: ...


class FakeScopes:
    """`ChatScopes` from a fixed list."""

    def __init__(self, *scopes: str) -> None:
        self.listed = list(scopes)

    async def scopes(self) -> list[str]:
        return list(self.listed)


if TYPE_CHECKING:  # the fakes are these ports, checked by pyright
    from memory_core.memories.fake import FakeMemories

    def _conform(memories: FakeMemories, scopes: FakeScopes) -> tuple[MemoryPort, ChatScopes]:  # pyright: ignore[reportUnusedFunction]
        return memories, scopes
