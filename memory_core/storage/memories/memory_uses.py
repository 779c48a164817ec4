"""What other aggregates read of memories through MemoryRepo: the nightly gc's cold
rule, the vector index builder, a forget request's memories and a memory pack."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import case, exists, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository
from memory_core.storage.schema import (
    aliases,
    experiences,
    fragments,
    memories,
    memory_evidence,
    memory_relations,
    redactions,
)
from memory_core.storage.schema import memory_versions as versions

from .memory_sql import m


@dataclass(frozen=True, slots=True)
class GcCandidate:
    """What the nightly cold rule reads of one memory."""

    id: int
    type: str
    importance: float
    created_at: datetime
    last_accessed_at: datetime | None
    hit_count: int
    pinned: bool
    starred: bool
    in_chain: bool


@dataclass(frozen=True, slots=True)
class MemoryRows:
    """One chat's memory rows as a memory pack carries them (pack_repo.PackRows)."""

    memories: list[dict[str, Any]]
    versions: list[dict[str, Any]]
    evidence: list[dict[str, Any]]
    """memory_id, role, and the quoted message, fragment or memory it rests on."""
    relations: list[dict[str, Any]]
    aliases: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class MemoryText:
    """What the vector index embeds of one memory."""

    id: int
    version: int
    scope: str
    subject: str
    content: str
    status: str


class MemoryUses(Repository):
    async def gc_rows(
        self, scope: str, idle_before: datetime, limit: int, *, conn: AsyncConnection | None = None
    ) -> list[GcCandidate]:
        """Active memories of the scope idle since before `idle_before`, longest idle first."""
        idle = func.coalesce(m.last_accessed_at, m.created_at)
        r = memory_relations.c
        chain = exists().where(
            r.kind.in_(("supersedes", "contradicts")), or_(r.src_id == m.id, r.dst_id == m.id)
        )
        query = (
            select(
                m.id,
                m.type,
                m.importance,
                m.created_at,
                m.last_accessed_at,
                m.hit_count,
                m.pinned,
                m.starred,
                chain.label("in_chain"),
            )
            .where(m.scope == scope, m.status == "active", idle < idle_before)
            .order_by(idle, m.id)
            .limit(limit)
        )
        async with self.reading(conn) as c:
            return [
                GcCandidate(
                    id=int(row.id),
                    type=str(row.type),
                    importance=float(row.importance),
                    created_at=row.created_at,
                    last_accessed_at=row.last_accessed_at,
                    hit_count=int(row.hit_count),
                    pinned=bool(row.pinned),
                    starred=bool(row.starred),
                    in_chain=bool(row.in_chain),
                )
                for row in await c.execute(query)
            ]

    async def embeddable(self, *, conn: AsyncConnection | None = None) -> list[MemoryText]:
        """Every memory recall could ever show (active or cold; retracted ones never
        are), current version, in id order."""
        query = (
            select(m.id, m.version, m.scope, m.subject, m.content, m.status)
            .where(m.status != "retracted")
            .order_by(m.id)
        )
        async with self.reading(conn) as c:
            rows = (await c.execute(query)).all()
        return [
            MemoryText(int(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5]))
            for r in rows
        ]

    async def source_fingerprint(self, *, conn: AsyncConnection | None = None) -> str:
        """Changes whenever anything the vector index is derived from changes (memories,
        aliases, evidence); cheap to compute: the scheduler asks it before starting
        `yuji embed`."""
        memory_stats = select(
            func.count(m.id),
            func.max(m.id),
            func.coalesce(func.sum(m.version), 0),
            func.max(m.updated_at),
        )
        alias_stats = select(func.count(aliases.c.id), func.max(aliases.c.id))
        evidence_stats = select(func.count(memory_evidence.c.id), func.max(memory_evidence.c.id))
        async with self.reading(conn) as c:
            mem = (await c.execute(memory_stats)).one()
            ali = (await c.execute(alias_stats)).one()
            evi = (await c.execute(evidence_stats)).one()
        return "|".join(str(v) for v in (*mem, *ali, *evi))

    async def about_person(
        self, scope: str, user_id: str, names: Iterable[str], *, conn: AsyncConnection | None = None
    ) -> list[int]:
        """Every memory of this chat (any status) whose subject is one of `names` or
        resolved to `user_id` (`subject_person`, whatever name it was written by), or
        resting only on messages of `user_id` (a forget request's memories)."""
        ev, x = memory_evidence.c, experiences.c
        async with self.reading(conn) as c:
            about = {
                int(r[0])
                for r in await c.execute(
                    select(m.id).where(
                        m.scope == scope,
                        or_(m.subject.in_(sorted(set(names))), m.subject_person == user_id),
                    )
                )
            }
            theirs = (
                select(ev.memory_id)
                .join(memories, m.id == ev.memory_id)
                .outerjoin(experiences, x.id == ev.experience_id)
                .where(m.scope == scope)
                .group_by(ev.memory_id)
                .having(func.count() == func.sum(case((x.sender_id == user_id, 1), else_=0)))
            )
            only = {int(r[0]) for r in await c.execute(theirs)}
        return sorted(about | only)

    async def memory_scopes(self, *, conn: AsyncConnection | None = None) -> list[str]:
        """The chats that have memories (of any status)."""
        async with self.reading(conn) as c:
            rows = await c.execute(select(m.scope).distinct().order_by(m.scope))
            return [str(r[0]) for r in rows]

    async def subject_counts(
        self, scope: str, *, conn: AsyncConnection | None = None
    ) -> dict[str | None, int]:
        """How many of this chat's memories (retracted ones apart) have each kind of
        subject; None: not resolved yet (a store from before the person index)."""
        async with self.reading(conn) as c:
            rows = await c.execute(
                select(m.subject_kind, func.count())
                .where(m.scope == scope, m.status != "retracted")
                .group_by(m.subject_kind)
            )
            return {None if r[0] is None else str(r[0]): int(r[1]) for r in rows}

    async def pack_rows(self, scope: str, *, conn: AsyncConnection | None = None) -> MemoryRows:
        """Everything of one chat's memories a memory pack carries, as plain rows."""
        ids = select(m.id).where(m.scope == scope).scalar_subquery()
        v, e, x, f = versions.c, memory_evidence.c, experiences.c, fragments.c
        r, a = memory_relations.c, aliases.c
        evidence = (
            select(
                e.memory_id,
                e.role,
                e.source_memory_id,
                e.fragment_id,
                e.experience_id,
                x.sender_id,
                x.sender_name,
                x.sent_at,
                x.text,
                f.summary,
                f.first_sent_at,
                redactions.c.id.label("redaction_id"),
            )
            .select_from(memory_evidence)
            .outerjoin(experiences, x.id == e.experience_id)
            .outerjoin(fragments, f.id == e.fragment_id)
            .outerjoin(redactions, redactions.c.experience_id == e.experience_id)
            .where(e.memory_id.in_(ids))
            .order_by(e.memory_id, e.id)
        )
        async with self.reading(conn) as c:

            async def all_of(query: Any) -> list[dict[str, Any]]:
                return [dict(row) for row in (await c.execute(query)).mappings()]

            return MemoryRows(
                memories=await all_of(select(memories).where(m.scope == scope).order_by(m.id)),
                versions=await all_of(
                    select(versions).where(v.memory_id.in_(ids)).order_by(v.memory_id, v.version)
                ),
                evidence=await all_of(evidence),
                relations=await all_of(
                    select(memory_relations).where(r.scope == scope).order_by(r.id)
                ),
                aliases=await all_of(select(aliases).where(a.scope == scope).order_by(a.id)),
            )
