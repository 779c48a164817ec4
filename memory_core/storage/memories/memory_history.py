"""MemoryRepo's version rows (history is never lost) and evidence rows (what a
memory rests on), with the reads other aggregates make of evidence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, literal_column, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository
from memory_core.storage.schema import experiences, fragments, memories, memory_evidence
from memory_core.storage.schema import memory_versions as versions
from memory_core.types import EvidenceRef, Memory, MemoryVersion

from .memory_sql import m


class MemoryHistory(Repository):
    async def insert_versions(
        self,
        written: Sequence[Memory],
        *,
        changed_by: str,
        reason: str,
        at: datetime,
        conn: AsyncConnection | None = None,
    ) -> None:
        """One version row per memory, as it reads now."""
        if not written:
            return
        async with self.writing(conn) as c:
            await c.execute(
                insert(versions), [_version_row(mem, changed_by, reason, at) for mem in written]
            )

    async def history(
        self, memory_id: int, *, conn: AsyncConnection | None = None
    ) -> list[MemoryVersion]:
        """Every version of the memory, oldest first."""
        v = versions.c
        columns = [v[f.name] for f in fields(MemoryVersion)]
        async with self.reading(conn) as c:
            rows = await c.execute(
                select(*columns).where(v.memory_id == memory_id).order_by(v.version)
            )
            return [MemoryVersion(**row) for row in rows.mappings()]

    async def changed_by(
        self, memory_id: int, actor: str, *, conn: AsyncConnection | None = None
    ) -> bool:
        """Whether any version of the memory was written by `actor`."""
        v = versions.c
        async with self.reading(conn) as c:
            found = await c.execute(
                select(literal_column("1"))
                .where(v.memory_id == memory_id, v.changed_by == actor)
                .limit(1)
            )
            return found.first() is not None

    async def existing_in_scope(
        self, scope: str, refs: Sequence[EvidenceRef], *, conn: AsyncConnection | None = None
    ) -> tuple[set[int], set[int], set[int]]:
        """Which experience / memory / fragment ids of `refs` exist in this chat."""
        exp_ids = {r.experience_id for r in refs if r.experience_id is not None}
        mem_ids = {r.memory_id for r in refs if r.memory_id is not None}
        frag_ids = {r.fragment_id for r in refs if r.fragment_id is not None}
        found: list[set[int]] = []
        async with self.reading(conn) as c:
            for source, ids in ((experiences, exp_ids), (memories, mem_ids), (fragments, frag_ids)):
                if not ids:
                    found.append(set())
                    continue
                rows = await c.execute(
                    select(source.c.id).where(source.c.scope == scope, source.c.id.in_(sorted(ids)))
                )
                found.append({row.id for row in rows})
        return found[0], found[1], found[2]

    async def senders(
        self, scope: str, experience_ids: Sequence[int], *, conn: AsyncConnection | None = None
    ) -> dict[int, tuple[str, bool, bool]]:
        """Experience id -> (its sender, sent by the bot, replies to a bot message) of
        those of `experience_ids` in this chat: whose word a memory resting on them is."""
        if not experience_ids:
            return {}
        e = experiences.c
        quoted = experiences.alias("quoted")
        q = quoted.c
        replies_to_bot = (
            select(q.id)
            .where(q.scope == e.scope, q.fingerprint == e.reply_to, q.is_bot.is_(True))
            .exists()
        )
        async with self.reading(conn) as c:
            rows = await c.execute(
                select(e.id, e.sender_id, e.is_bot, replies_to_bot.label("quotes_bot")).where(
                    e.scope == scope, e.id.in_(sorted(set(experience_ids)))
                )
            )
            return {r.id: (r.sender_id, bool(r.is_bot), bool(r.quotes_bot)) for r in rows}

    async def insert_evidence(
        self,
        items: Sequence[tuple[int, Sequence[EvidenceRef]]],
        at: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        """The evidence of each (memory id, refs) item."""
        rows = [
            {
                "memory_id": memory_id,
                "experience_id": r.experience_id,
                "source_memory_id": r.memory_id,
                "fragment_id": r.fragment_id,
                "role": r.role,
                "created_at": at,
            }
            for memory_id, refs in items
            for r in refs
        ]
        if not rows:
            return
        async with self.writing(conn) as c:
            await c.execute(insert(memory_evidence), rows)

    async def evidence(
        self, memory_id: int, *, conn: AsyncConnection | None = None
    ) -> list[EvidenceRef]:
        e = memory_evidence.c
        async with self.reading(conn) as c:
            rows = await c.execute(
                select(memory_evidence).where(e.memory_id == memory_id).order_by(e.id)
            )
            return [
                EvidenceRef(
                    experience_id=row.experience_id,
                    memory_id=row.source_memory_id,
                    fragment_id=row.fragment_id,
                    role=row.role,
                )
                for row in rows
            ]

    async def evidence_count(self, memory_id: int, *, conn: AsyncConnection | None = None) -> int:
        e = memory_evidence.c
        async with self.reading(conn) as c:
            result = await c.execute(
                select(func.count()).select_from(memory_evidence).where(e.memory_id == memory_id)
            )
            return int(result.scalar_one())

    async def evidence_texts(
        self, per_memory: int, *, conn: AsyncConnection | None = None
    ) -> dict[int, list[str]]:
        """memory id -> the texts of its first `per_memory` evidence messages (by id)."""
        query = (
            select(memory_evidence.c.memory_id, experiences.c.text)
            .join(experiences, experiences.c.id == memory_evidence.c.experience_id)
            .order_by(memory_evidence.c.memory_id, experiences.c.id)
        )
        async with self.reading(conn) as c:
            rows = (await c.execute(query)).all()
        out: dict[int, list[str]] = {}
        for memory_id, said in rows:
            texts = out.setdefault(int(memory_id), [])
            if len(texts) < per_memory and str(said).strip():
                texts.append(str(said))
        return out

    async def evidence_instants(
        self, scope: str, memory_ids: Sequence[int], *, conn: AsyncConnection | None = None
    ) -> dict[int, datetime]:
        """memory id -> when its earliest evidence (message or fragment) was said."""
        ids = sorted(set(memory_ids))
        e = memory_evidence.c
        found: dict[int, datetime] = {}
        async with self.reading(conn) as c:
            for query in (
                select(e.memory_id, func.min(experiences.c.sent_at))
                .join(experiences, experiences.c.id == e.experience_id)
                .where(e.memory_id.in_(ids), experiences.c.scope == scope)
                .group_by(e.memory_id),
                select(e.memory_id, func.min(fragments.c.first_sent_at))
                .join(fragments, fragments.c.id == e.fragment_id)
                .where(e.memory_id.in_(ids), fragments.c.scope == scope)
                .group_by(e.memory_id),
            ):
                for memory_id, instant in await c.execute(query):
                    if instant is None:
                        continue
                    key = int(memory_id)
                    found[key] = min(found[key], instant) if key in found else instant
        return found

    async def citing(
        self, scope: str, experience_id: int, origin: str, *, conn: AsyncConnection | None = None
    ) -> int | None:
        """The newest memory of this chat and origin resting on the experience."""
        e = memory_evidence.c
        async with self.reading(conn) as c:
            value = await c.scalar(
                select(m.id)
                .join(memory_evidence, e.memory_id == m.id)
                .where(m.scope == scope, m.origin == origin, e.experience_id == experience_id)
                .order_by(m.id.desc())
                .limit(1)
            )
        return None if value is None else int(value)


def _version_row(memory: Memory, changed_by: str, reason: str, at: datetime) -> dict[str, Any]:
    return {
        "memory_id": memory.id,
        "version": memory.version,
        "type": memory.type,
        "subject": memory.subject,
        "content": memory.content,
        "importance": memory.importance,
        "confidence": memory.confidence,
        "status": memory.status,
        "valid_from": memory.valid_from,
        "valid_to": memory.valid_to,
        "changed_at": at,
        "changed_by": changed_by,
        "reason": reason,
        "subject_kind": memory.subject_kind,
        "subject_person": memory.subject_person,
        "word": memory.word,
    }
