"""Fakes of the chat path's ports (ports.py), for tests that need no database.

Each keeps what a caller can observe and records what it was asked: `FakeArchive`
(ArchivePort, backfill's BackfillArchive), `FakeRecall` (RecallPort), `FakeContext`
(ContextPort), `FakeBlocks` (BlocksPort), `FakeCards` and `FakeStatus` (the
commands' ports). `memories.fake.FakeMemories` is MemoriesPort's and
CommandMemoriesPort's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from memory_core.clock import Clock
from memory_core.recall.wake import Turn
from memory_core.types import Asker, Experience, NewExperience, Quoted, Recalled, RecallResult

from .texts import ScopeStatus


class FakeArchive:
    """Experiences in a list; a fingerprint already in its chat returns the old id."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.rows: list[Experience] = []

    async def append(self, exp: NewExperience) -> int:
        found = await self.by_fingerprint(exp.scope, exp.fingerprint)
        if found is not None:
            return found.id
        row = Experience(
            id=len(self.rows) + 1,
            scope=exp.scope,
            fingerprint=exp.fingerprint,
            sender_id=exp.sender_id,
            sender_name=exp.sender_name,
            is_bot=exp.is_bot,
            text=exp.text,
            segments=exp.segments,
            reply_to=exp.reply_to,
            sent_at=exp.sent_at,
            received_at=self.clock.now(),
            source=exp.source,
        )
        self.rows.append(row)
        return row.id

    async def append_many(self, exps: Sequence[NewExperience]) -> list[int]:
        return [await self.append(exp) for exp in exps]

    async def recent(
        self, scope: str, limit: int, before_id: int | None = None
    ) -> list[Experience]:
        mine = [
            r for r in self.rows if r.scope == scope and (before_id is None or r.id < before_id)
        ]
        return mine[-limit:] if limit > 0 else []

    async def by_fingerprint(self, scope: str, fingerprint: str) -> Experience | None:
        return next(
            (r for r in self.rows if (r.scope, r.fingerprint) == (scope, fingerprint)), None
        )

    async def newest_received_before(self, scope: str, before: datetime) -> Experience | None:
        mine = [r for r in self.rows if r.scope == scope and r.received_at < before]
        return mine[-1] if mine else None

    async def get_many(self, scope: str, ids: Sequence[int]) -> list[Experience]:
        wanted = set(ids)
        return [r for r in self.rows if r.scope == scope and r.id in wanted]


class FakeRecall:
    """Answers a question found in `by_query` from there and any other with `items`
    (at most `limit`), recording each call as (scope, text, limit)."""

    def __init__(self, by_query: dict[str, list[Recalled]] | None = None) -> None:
        self.items: list[Recalled] = []
        self.quotes: list[Quoted] = []
        self.by_query = dict(by_query or {})
        self.calls: list[tuple[str, str, int]] = []
        self.contexts: list[tuple[Turn, ...]] = []
        """The context each call was given."""
        self.askers: list[Asker | None] = []
        """Who each call said asked."""
        self.mentioned: list[tuple[str, ...]] = []
        """Whom each call said the wake @-mentions."""

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
    ) -> RecallResult:
        self.calls.append((scope, text, limit))
        self.contexts.append(tuple(context))
        self.askers.append(asker)
        self.mentioned.append(tuple(mentioned))
        return RecallResult(
            items=tuple(self.by_query.get(text, self.items)[:limit]), quotes=tuple(self.quotes)
        )


class FakeContext:
    """Consolidation's view of every chat: one watermark, fragments and contradictions."""

    def __init__(
        self,
        *,
        acked: int = 0,
        fragments: Sequence[str] = (),
        contradicting: Sequence[tuple[int, int]] = (),
    ) -> None:
        self.acked = acked
        self.fragments = list(fragments)
        self.contradicting = list(contradicting)

    async def acked_id(self, scope: str) -> int:
        return self.acked

    async def open_fragments(self, scope: str, limit: int) -> list[str]:
        return self.fragments[-limit:] if limit > 0 else []

    async def contradicting_pairs(self, scope: str, ids: Sequence[int]) -> list[tuple[int, int]]:
        return [(a, b) for a, b in self.contradicting if a in ids and b in ids]


@dataclass(frozen=True, slots=True)
class Blocks:
    states: Sequence[str] = ()
    cards: Sequence[tuple[str, str]] = ()
    timeline: Sequence[str] = ()
    recent_diaries: Sequence[tuple[str, str]] = ()
    background_diary: tuple[str, str] | None = None


class FakeBlocks:
    """The same nightly blocks for every chat and question."""

    def __init__(self, blocks: Blocks | None = None) -> None:
        self.given = blocks or Blocks()

    async def blocks(self, scope: str, now: datetime, recalled: Sequence[Recalled]) -> Blocks:
        return self.given


@dataclass(frozen=True, slots=True)
class Card:
    kind: str
    content: str


class FakeCards:
    def __init__(self, cards: Sequence[Card] = ()) -> None:
        self.given = list(cards)

    async def cards(self, scope: str) -> list[Card]:
        return list(self.given)


class FakeStatus:
    def __init__(self, pending: int = 0) -> None:
        self.pending = pending

    async def scope_status(self, scope: str) -> ScopeStatus:
        return ScopeStatus(scope=scope, pending=self.pending)


if TYPE_CHECKING:  # each fake is its port, checked by pyright
    from memory_core.memories.fake import FakeMemories

    from .backfill import BackfillArchive
    from .commands import CardsPort, StatusPort
    from .ports import (
        ArchivePort,
        BlocksPort,
        CommandMemoriesPort,
        ContextPort,
        MemoriesPort,
        RecallPort,
    )

    def _conform(  # pyright: ignore[reportUnusedFunction]
        archive: FakeArchive,
        recall: FakeRecall,
        context: FakeContext,
        blocks: FakeBlocks,
        cards: FakeCards,
        status: FakeStatus,
        memories: FakeMemories,
    ) -> tuple[
        ArchivePort,
        BackfillArchive,
        RecallPort,
        ContextPort,
        BlocksPort,
        CardsPort,
        StatusPort,
        MemoriesPort,
        CommandMemoriesPort,
    ]:
        return archive, archive, recall, context, blocks, cards, status, memories, memories
