"""What the web console reads of memories through MemoryRepo: per-chat counts, new
memories per hour, a filtered page (never a forgotten person's), subjects, a
memory's chat and its relations, and the memories about one member of a chat
(`subject_person`) with their counts per member and word."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.dialect import utc_hour
from memory_core.storage.repository import Repository
from memory_core.storage.schema import memories, memory_relations
from memory_core.types import Memory, MemoryStatus, MemoryType

from .memory_sql import forgotten, m, to_memory


@dataclass(frozen=True, slots=True)
class RelationRow:
    src_id: int
    dst_id: int
    kind: str
    reason: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    types: tuple[MemoryType, ...] = ()
    status: MemoryStatus | None = None
    subject: str = ""
    limit: int = 100
    offset: int = 0


class MemoryConsole(Repository):
    async def counts_by_scope(self, *, conn: AsyncConnection | None = None) -> dict[str, int]:
        """Memories per chat (any status)."""
        async with self.reading(conn) as c:
            rows = await c.execute(select(m.scope, func.count().label("n")).group_by(m.scope))
            return {str(r.scope): int(r.n) for r in rows}

    async def created_per_hour(
        self, since: datetime, *, conn: AsyncConnection | None = None
    ) -> dict[str, int]:
        """New memories since `since`, per UTC hour ("YYYY-MM-DD HH")."""
        async with self.reading(conn) as c:
            hour = utc_hour(c.dialect.name, m.created_at).label("hour")
            rows = await c.execute(
                select(hour, func.count().label("n")).where(m.created_at >= since).group_by(hour)
            )
            return {str(r.hour): int(r.n) for r in rows}

    async def page(
        self, scope: str, where: MemoryFilter, *, conn: AsyncConnection | None = None
    ) -> tuple[list[Memory], int]:
        """One page of this chat's memories, newest first, and how many match in all."""
        clauses = [m.scope == scope, ~forgotten(m.id)]
        if where.types:
            clauses.append(m.type.in_(list(where.types)))
        if where.status is not None:
            clauses.append(m.status == where.status)
        if where.subject:
            clauses.append(m.subject == where.subject)
        async with self.reading(conn) as conn:
            total = int(
                await conn.scalar(select(func.count()).select_from(memories).where(*clauses)) or 0
            )
            rows = await conn.execute(
                select(memories)
                .where(*clauses)
                .order_by(m.id.desc())
                .limit(where.limit)
                .offset(where.offset)
            )
            return [to_memory(r) for r in rows], total

    async def subjects(
        self, scope: str, limit: int = 200, *, conn: AsyncConnection | None = None
    ) -> list[str]:
        """This chat's subjects, the most written about first."""
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(m.subject)
                .where(m.scope == scope)
                .group_by(m.subject)
                .order_by(func.count().desc(), m.subject)
                .limit(limit)
            )
            return [str(r.subject) for r in rows]

    async def scope_of(self, memory_id: int, *, conn: AsyncConnection | None = None) -> str | None:
        async with self.reading(conn) as conn:
            return await conn.scalar(select(m.scope).where(m.id == memory_id))

    async def relations_of(
        self, scope: str, memory_id: int, *, conn: AsyncConnection | None = None
    ) -> list[RelationRow]:
        r = memory_relations.c
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(memory_relations)
                .where(r.scope == scope, or_(r.src_id == memory_id, r.dst_id == memory_id))
                .order_by(r.id)
            )
            return [RelationRow(x.src_id, x.dst_id, x.kind, x.reason, x.created_at) for x in rows]

    async def memories_about(
        self, scope: str, user_id: str, limit: int = 500, *, conn: AsyncConnection | None = None
    ) -> list[Memory]:
        """This chat's memories about the member `user_id` (subject_person), any status
        but never a forgotten person's, newest first. Another chat's are never read."""
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(memories)
                .where(
                    m.scope == scope,
                    m.subject_kind == "person",
                    m.subject_person == user_id,
                    ~forgotten(m.id),
                )
                .order_by(m.id.desc())
                .limit(limit)
            )
            return [to_memory(r) for r in rows]

    async def person_counts(
        self, scope: str, *, conn: AsyncConnection | None = None
    ) -> dict[str, dict[str, int]]:
        """This chat's memories about each member, per word: user id -> word -> count
        (a memory whose word is unknown counts under "")."""
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(m.subject_person, m.word, func.count().label("n"))
                .where(
                    m.scope == scope,
                    m.subject_kind == "person",
                    m.subject_person.is_not(None),
                    ~forgotten(m.id),
                )
                .group_by(m.subject_person, m.word)
            )
            counts: dict[str, dict[str, int]] = {}
            for r in rows:
                counts.setdefault(str(r.subject_person), {})[str(r.word or "")] = int(r.n)
            return counts
