"""Memories written straight into the tables, so vector tests depend on nothing else."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.engine import Database
from memory_core.storage.fulltext import fts
from memory_core.storage.schema import aliases, experiences, memories, memory_evidence

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


async def add_memory(
    db: Database, scope: str, subject: str, content: str, *, status: str = "active"
) -> int:
    async with db.write() as conn:
        result = await conn.execute(
            insert(memories).values(
                scope=scope,
                type="fact",
                subject=subject,
                content=content,
                status=status,
                created_at=T0,
                updated_at=T0,
            )
        )
        memory_id = int(result.inserted_primary_key[0])  # type: ignore[index]
        await _index_text(conn, memory_id, scope, subject, content)
        return memory_id


async def _index_text(
    conn: AsyncConnection, memory_id: int, scope: str, subject: str, content: str
) -> None:
    """The full-text row the write path keeps (the gate reads the chat's vocabulary)."""
    await conn.execute(text("DELETE FROM memory_fts WHERE rowid = :id"), {"id": memory_id})
    await conn.execute(
        text("INSERT INTO memory_fts(rowid, bi) VALUES (:id, :bi)"),
        {"id": memory_id, "bi": fts.document(scope, subject, content)},
    )


async def edit_memory(db: Database, memory_id: int, content: str) -> None:
    async with db.write() as conn:
        await conn.execute(
            update(memories)
            .where(memories.c.id == memory_id)
            .values(content=content, version=memories.c.version + 1, updated_at=T0)
        )
        row = (
            await conn.execute(
                select(memories.c.scope, memories.c.subject).where(memories.c.id == memory_id)
            )
        ).one()
        await _index_text(conn, memory_id, str(row[0]), str(row[1]), content)


async def set_status(db: Database, memory_id: int, status: str) -> None:
    async with db.write() as conn:
        await conn.execute(update(memories).where(memories.c.id == memory_id).values(status=status))


async def add_alias(db: Database, scope: str, alias: str, canonical: str) -> None:
    async with db.write() as conn:
        await conn.execute(
            insert(aliases).values(scope=scope, alias=alias, canonical=canonical, created_at=T0)
        )


async def add_evidence(db: Database, memory_id: int, scope: str, text: str) -> None:
    """An archived message and an evidence row pointing at it."""
    async with db.write() as conn:
        result = await conn.execute(
            insert(experiences).values(
                scope=scope,
                fingerprint=f"fp-{memory_id}-{abs(hash(text))}",
                sender_id="1",
                text=text,
                segments=[],
                sent_at=T0,
                received_at=T0,
                source="realtime",
            )
        )
        experience_id = int(result.inserted_primary_key[0])  # type: ignore[index]
        await conn.execute(
            insert(memory_evidence).values(
                memory_id=memory_id, experience_id=experience_id, created_at=T0
            )
        )
