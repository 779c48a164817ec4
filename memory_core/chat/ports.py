"""What the chat path needs from the other areas, as small Protocols.

The real services (`core.archive`, `core.recall`, `core.memories`, `core.nightly`,
the consolidation repository) satisfy these structurally; tests may pass fakes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from collections.abc import Sequence as _Sequence
from datetime import datetime
from typing import Protocol

from memory_core.followups import FollowUp
from memory_core.memories.ports import WritesMemories
from memory_core.recall.wake import Turn
from memory_core.types import Asker, Experience, Memory, NewExperience, Recalled, RecallResult


class ArchivePort(Protocol):
    async def append(self, exp: NewExperience) -> int: ...

    async def append_many(self, exps: Sequence[NewExperience]) -> list[int]: ...

    async def recent(
        self, scope: str, limit: int, before_id: int | None = None
    ) -> list[Experience]: ...

    async def by_fingerprint(self, scope: str, fingerprint: str) -> Experience | None: ...

    async def get_many(self, scope: str, ids: Sequence[int]) -> list[Experience]: ...

    async def newest_received_before(self, scope: str, before: datetime) -> Experience | None: ...


class RecallPort(Protocol):
    async def recall(
        self,
        scope: str,
        text: str,
        *,
        now: datetime | None = None,
        limit: int = 5,
        before_id: int | None = None,
        context: Sequence[Turn] = (),
        asker: Asker | None = None,
        mentioned: Sequence[str] = (),
    ) -> RecallResult: ...


class MemoriesPort(Protocol):
    async def credit(self, scope: str, ids: Sequence[int], at: datetime) -> None: ...

    async def get_many(self, scope: str, ids: Sequence[int]) -> list[Memory]: ...


class CommandMemoriesPort(WritesMemories, Protocol):
    """What the slash commands do to memories: `/remember` writes one, `/forget` reads
    and retracts one, `/why` reads those a reply was given."""

    async def get(self, scope: str, memory_id: int) -> Memory: ...

    async def get_many(self, scope: str, ids: Sequence[int]) -> list[Memory]: ...

    async def retract(
        self, scope: str, memory_id: int, *, reason: str, changed_by: str
    ) -> Memory: ...


class BlocksLike(Protocol):
    """`core.nightly.blocks(...)`'s result (NightlyBlocks), read-only."""

    @property
    def states(self) -> Sequence[str]: ...

    @property
    def cards(self) -> Sequence[tuple[str, str]]: ...

    @property
    def timeline(self) -> Sequence[str]: ...

    @property
    def recent_diaries(self) -> Sequence[tuple[str, str]]: ...

    @property
    def background_diary(self) -> tuple[str, str] | None: ...


class BlocksPort(Protocol):
    async def blocks(
        self, scope: str, now: datetime, recalled: Sequence[Recalled]
    ) -> BlocksLike: ...


class MemoryWordLike(Protocol):
    """`core.person_cards`' MemoryWord: a memory's subject by current name, whose word."""

    @property
    def subject(self) -> str: ...

    @property
    def said(self) -> str: ...


class PeopleViewLike(Protocol):
    """`core.person_cards.prompt_view(...)`'s result (PeopleView), read-only."""

    @property
    def cards(self) -> Sequence[tuple[str, str]]: ...

    @property
    def words(self) -> Mapping[int, MemoryWordLike]: ...


class FollowupsPort(Protocol):
    """`core.followups`: the one follow-up a reply may carry, and marking it asked."""

    async def offer(self, scope: str, person: str, now: datetime) -> FollowUp | None: ...

    async def mark_asked(
        self, scope: str, memory_id: int, *, sent_text: str | None = None
    ) -> None: ...


class PeoplePort(Protocol):
    """The people a reply concerns (`core.person_cards`): cards, names, whose word."""

    async def prompt_view(
        self,
        scope: str,
        *,
        asker: str | None,
        mentioned: Sequence[str] = (),
        text: str = "",
        memories: Sequence[Memory] = (),
    ) -> PeopleViewLike: ...


class ContextPort(Protocol):
    """Consolidation's view of a chat: where summarising stopped and what it wrote."""

    async def acked_id(self, scope: str) -> int: ...

    async def open_fragments(self, scope: str, limit: int) -> list[str]:
        """Summaries not yet absorbed into a diary, oldest first (the newest `limit`)."""
        ...

    async def contradicting_pairs(self, scope: str, ids: Sequence[int]) -> list[tuple[int, int]]:
        """`contradicts` edges among `ids`."""
        ...


ImageTexts = Callable[[_Sequence[Experience]], Awaitable[dict[int, str]]]
"""experience id -> text with `[图片：描述]` (`core.vision.texts`), for those with any."""


class DeploymentPort(Protocol):
    """The other bot processes on this store (`memory_core/deployment/`)."""

    async def is_ours(self, sender_id: str) -> bool:
        """The sender is one of the deployment's accounts (never answered)."""
        ...

    async def claim(
        self, scope: str, sender_id: str, sent_at: datetime, text: str, account: str
    ) -> bool:
        """True when this process answers a wake several accounts heard."""
        ...
