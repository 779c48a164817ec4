"""SQL of memory packs: everything of one chat a pack carries, read in one snapshot,
and the nightly material (cards, diaries, timeline) a restored pack brings back.
Every method takes an optional open connection (see repository.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, String, Text, and_, column, exists, insert, literal, select, values
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.engine import Database
from memory_core.storage.memories.memory_repo import MemoryRepo, MemoryRows
from memory_core.storage.nightly.nightly_repo import CARD_COLUMNS, append_card
from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import cards, diaries, forget_requests, timeline
from memory_core.storage.types import UTCDateTime

Row = dict[str, Any]


@dataclass(slots=True)
class PackRows:
    memories: list[Row] = field(default_factory=list[Row])
    versions: list[Row] = field(default_factory=list[Row])
    evidence: list[Row] = field(default_factory=list[Row])
    """memory_id, role, and the quoted message, fragment or memory it rests on."""
    relations: list[Row] = field(default_factory=list[Row])
    aliases: list[Row] = field(default_factory=list[Row])
    cards: list[Row] = field(default_factory=list[Row])
    diaries: list[Row] = field(default_factory=list[Row])
    timeline: list[Row] = field(default_factory=list[Row])
    forgotten_names: list[str] = field(default_factory=list[str])
    """Every name of every person forgotten in this chat (their text stays out)."""
    forgotten_memories: set[int] = field(default_factory=set[int])
    """Memories a forget request retracted (or found retracted already)."""


class PackRepo(Repository):
    def __init__(self, db: Database, memory_repo: MemoryRepo) -> None:
        super().__init__(db)
        self.memory_repo = memory_repo
        """Where a pack's memory rows are read."""

    async def export_rows(self, scope: str, *, conn: AsyncConnection | None = None) -> PackRows:
        """Everything of one chat a pack carries, in one snapshot."""
        async with self.reading(conn) as c:
            return await _export(c, scope, await self.memory_repo.pack_rows(scope, conn=c))

    async def restore_cards(
        self,
        scope: str,
        kind: str,
        history: Sequence[tuple[str, str | None]],
        at: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> int:
        """A card's versions (content, day), oldest first: all of them into a chat without
        this card, else only the newest when it differs from the chat's current one (so a
        rerun adds nothing). Returns the versions written."""
        if not history:
            return 0
        async with self.writing(conn) as c:
            return await _restore_cards(c, scope, kind, history, at)

    async def restore_diary(
        self,
        scope: str,
        day: str,
        content: str,
        at: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> bool:
        """The day's diary, unless the chat already has one for that day."""
        d = diaries.c
        async with self.writing(conn) as c:
            result = await c.execute(
                upsert(c, diaries)
                .values(scope=scope, day=day, content=content, fragment_ids=[], created_at=at)
                .on_conflict_do_nothing(index_elements=[d.scope, d.day])
            )
            return result.rowcount == 1

    async def restore_timeline(
        self,
        scope: str,
        day: str,
        content: str,
        at: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> bool:
        """The timeline entry, unless the chat already has the same one for that day."""
        t = timeline.c
        async with self.writing(conn) as c:
            result = await c.execute(
                upsert(c, timeline)
                .values(scope=scope, day=day, content=content, created_at=at)
                .on_conflict_do_nothing(index_elements=[t.scope, t.day, t.content])
            )
            return result.rowcount == 1


async def _export(conn: AsyncConnection, scope: str, memory_rows: MemoryRows) -> PackRows:
    rows = PackRows(
        memories=memory_rows.memories,
        versions=memory_rows.versions,
        evidence=memory_rows.evidence,
        relations=memory_rows.relations,
        aliases=memory_rows.aliases,
    )
    c = cards.c
    rows.cards = await _all(conn, select(cards).where(c.scope == scope).order_by(c.kind, c.version))
    d = diaries.c
    rows.diaries = await _all(conn, select(diaries).where(d.scope == scope).order_by(d.day))
    t = timeline.c
    rows.timeline = await _all(conn, select(timeline).where(t.scope == scope).order_by(t.day, t.id))
    q = forget_requests.c
    for names, report in await conn.execute(select(q.names, q.report).where(q.scope == scope)):
        rows.forgotten_names += [str(n) for n in names]
        rows.forgotten_memories |= {int(i) for i in (report or {}).get("memory_ids", [])}
    return rows


async def _all(conn: AsyncConnection, query: Any) -> list[Row]:
    return [dict(row) for row in (await conn.execute(query)).mappings()]


async def _restore_cards(
    conn: AsyncConnection,
    scope: str,
    kind: str,
    history: Sequence[tuple[str, str | None]],
    at: datetime,
) -> int:
    """Two guarded statements, each deciding in SQL, so a card another writer adds
    meanwhile is never overwritten nor numbered twice: the newest version appended
    when the card exists and its current content differs, else (no card at all)
    every version, numbered from 1."""
    c = cards.c
    of_card = and_(c.scope == scope, c.kind == kind)
    content, day = history[-1]
    current = select(c.content).where(of_card).order_by(c.version.desc()).limit(1)
    appended = await conn.execute(
        append_card(
            scope,
            kind,
            content,
            day,
            at,
            only_if=and_(exists().where(of_card), current.scalar_subquery() != content),
        )
    )
    if appended.rowcount:
        return 1
    versions = (
        values(
            column("version", Integer),
            column("content", Text),
            column("day", String),
            name="history",
        )
        .data([(i, text, d) for i, (text, d) in enumerate(history, 1)])
        .cte()
    )
    rows = select(
        literal(scope, String),
        literal(kind, String),
        versions.c.version,
        versions.c.content,
        versions.c.day,
        literal(at, UTCDateTime),
    ).where(~exists().where(of_card))
    # RETURNING counts: the driver reports no rowcount for a statement with a WITH.
    written = await conn.execute(
        insert(cards).from_select(list(CARD_COLUMNS), rows).returning(c.version)
    )
    return len(written.all())
