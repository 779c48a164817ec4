"""The nightly gc's reads over the memory tables (never writes: status changes go
through the memory service) and the optimisation of the derived full-text index."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import exists, func, or_, select

from .engine import Database
from .schema import memories, memory_relations


@dataclass(frozen=True, slots=True)
class GcCandidate:
    id: int
    type: str
    importance: float
    created_at: datetime
    last_accessed_at: datetime | None
    hit_count: int
    pinned: bool
    starred: bool
    in_chain: bool


class NightlyGcRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def gc_rows(self, scope: str, idle_before: datetime, limit: int) -> list[GcCandidate]:
        """Active memories of the scope idle since before `idle_before`, longest idle first."""
        idle = func.coalesce(memories.c.last_accessed_at, memories.c.created_at)
        chain = exists().where(
            memory_relations.c.kind.in_(("supersedes", "contradicts")),
            or_(
                memory_relations.c.src_id == memories.c.id,
                memory_relations.c.dst_id == memories.c.id,
            ),
        )
        async with self.db.read() as conn:
            rows = await conn.execute(
                select(
                    memories.c.id,
                    memories.c.type,
                    memories.c.importance,
                    memories.c.created_at,
                    memories.c.last_accessed_at,
                    memories.c.hit_count,
                    memories.c.pinned,
                    memories.c.starred,
                    chain.label("in_chain"),
                )
                .where(
                    memories.c.scope == scope,
                    memories.c.status == "active",
                    idle < idle_before,
                )
                .order_by(idle, memories.c.id)
                .limit(limit)
            )
            return [
                GcCandidate(
                    id=int(r.id),
                    type=str(r.type),
                    importance=float(r.importance),
                    created_at=r.created_at,
                    last_accessed_at=r.last_accessed_at,
                    hit_count=int(r.hit_count),
                    pinned=bool(r.pinned),
                    starred=bool(r.starred),
                    in_chain=bool(r.in_chain),
                )
                for r in rows
            ]

    async def fts_tables(self) -> list[str]:
        """The derived full-text tables present (named memory_fts*), for optimisation."""
        if not self.db.is_sqlite:
            return []
        async with self.db.read() as conn:
            rows = await conn.exec_driver_sql(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'memory_fts%' "
                "AND sql LIKE '%USING fts5(%'"
            )
            return [str(r[0]) for r in rows]

    async def optimize_derived(self) -> list[str]:
        """Merge the FTS5 segments of the derived indexes and refresh planner stats."""
        done: list[str] = []
        tables = await self.fts_tables()
        async with self.db.write() as conn:
            for name in tables:
                await conn.exec_driver_sql(f"INSERT INTO {name}({name}) VALUES ('optimize')")
                done.append(name)
            if self.db.is_sqlite:
                await conn.exec_driver_sql("PRAGMA optimize")
        return done
