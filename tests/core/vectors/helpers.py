"""Memories written straight into the tables, so vector tests depend on nothing else."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import insert, update

from memory_core.storage.engine import Database
from memory_core.storage.schema import aliases, memories

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
        return int(result.inserted_primary_key[0])  # type: ignore[index]


async def edit_memory(db: Database, memory_id: int, content: str) -> None:
    async with db.write() as conn:
        await conn.execute(
            update(memories)
            .where(memories.c.id == memory_id)
            .values(content=content, version=memories.c.version + 1, updated_at=T0)
        )


async def set_status(db: Database, memory_id: int, status: str) -> None:
    async with db.write() as conn:
        await conn.execute(update(memories).where(memories.c.id == memory_id).values(status=status))


async def add_alias(db: Database, scope: str, alias: str, canonical: str) -> None:
    async with db.write() as conn:
        await conn.execute(
            insert(aliases).values(scope=scope, alias=alias, canonical=canonical, created_at=T0)
        )
