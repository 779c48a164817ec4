"""Reads the vector side path needs from the truth tables (it writes none of them).

The vector index itself is a file under `data/vectors/`, never a table here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from . import memory_repo
from .engine import Database
from .schema import aliases, experiences, memories, memory_evidence


@dataclass(frozen=True, slots=True)
class MemoryText:
    id: int
    version: int
    scope: str
    subject: str
    content: str
    status: str


async def embeddable_memories(db: Database) -> list[MemoryText]:
    """Every memory recall could ever show (active or cold; retracted ones never are),
    current version, in id order."""
    query = (
        select(
            memories.c.id,
            memories.c.version,
            memories.c.scope,
            memories.c.subject,
            memories.c.content,
            memories.c.status,
        )
        .where(memories.c.status != "retracted")
        .order_by(memories.c.id)
    )
    async with db.read() as conn:
        rows = (await conn.execute(query)).all()
    return [
        MemoryText(int(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5])) for r in rows
    ]


async def evidence_texts(db: Database, per_memory: int) -> dict[int, list[str]]:
    """memory id -> the texts of its first `per_memory` evidence messages (by id)."""
    query = (
        select(memory_evidence.c.memory_id, experiences.c.text)
        .join(experiences, experiences.c.id == memory_evidence.c.experience_id)
        .order_by(memory_evidence.c.memory_id, experiences.c.id)
    )
    async with db.read() as conn:
        rows = (await conn.execute(query)).all()
    out: dict[int, list[str]] = {}
    for memory_id, text in rows:
        texts = out.setdefault(int(memory_id), [])
        if len(texts) < per_memory and str(text).strip():
            texts.append(str(text))
    return out


async def scope_aliases(conn: AsyncConnection, scope: str) -> dict[str, str]:
    query = select(aliases.c.alias, aliases.c.canonical).where(aliases.c.scope == scope)
    rows = (await conn.execute(query)).all()
    return {str(alias): str(canonical) for alias, canonical in rows}


async def current_texts(conn: AsyncConnection, ids: Iterable[int]) -> dict[int, tuple[str, int]]:
    """id -> (content, version) of the given memories."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    query = select(memories.c.id, memories.c.content, memories.c.version).where(
        memories.c.id.in_(wanted)
    )
    rows = (await conn.execute(query)).all()
    return {int(r[0]): (str(r[1]), int(r[2])) for r in rows}


async def source_fingerprint(db: Database) -> str:
    """Changes whenever anything the index is derived from changes (memories, aliases,
    evidence; cheap to compute:
    the scheduler asks it before starting `yuji embed`)."""
    memory_stats = select(
        func.count(memories.c.id),
        func.max(memories.c.id),
        func.coalesce(func.sum(memories.c.version), 0),
        func.max(memories.c.updated_at),
    )
    alias_stats = select(func.count(aliases.c.id), func.max(aliases.c.id))
    evidence_stats = select(func.count(memory_evidence.c.id), func.max(memory_evidence.c.id))
    async with db.read() as conn:
        m = (await conn.execute(memory_stats)).one()
        a = (await conn.execute(alias_stats)).one()
        e = (await conn.execute(evidence_stats)).one()
    return "|".join(str(v) for v in (*m, *a, *e))


async def heard_tokens(conn: AsyncConnection, scope: str, tokens: Iterable[str]) -> frozenset[str]:
    """Which of these index tokens some memory of this chat (and only this chat) holds,
    read from the chat's full-text vocabulary in one query."""
    found = await memory_repo.fts_document_frequencies(conn, scope, tokens)
    return frozenset(t for t, n in found.items() if n > 0)
