"""MemoryRepo's reads and writes of the memories table itself: insert, update,
lookups by id (always filtered on scope), the newest of a chat, the visible ids,
and the recall credit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository
from memory_core.storage.schema import memories
from memory_core.types import Memory, MemoryType

from . import memory_sql as sql
from .memory_sql import m, to_memory


class MemoryReads(Repository):
    async def insert_memories(
        self, rows: Sequence[dict[str, Any]], *, conn: AsyncConnection | None = None
    ) -> list[int]:
        """Insert many rows; ids come back in the order of `rows`."""
        if not rows:
            return []
        async with self.writing(conn) as c:
            result = await c.execute(
                insert(memories).returning(m.id, sort_by_parameter_order=True), list(rows)
            )
            return [int(i) for i in result.scalars()]

    async def update_memory(
        self, memory_id: int, values: dict[str, Any], *, conn: AsyncConnection | None = None
    ) -> None:
        async with self.writing(conn) as c:
            await c.execute(update(memories).where(m.id == memory_id).values(**values))

    async def get(
        self, scope: str, memory_id: int, *, conn: AsyncConnection | None = None
    ) -> Memory | None:
        async with self.reading(conn) as c:
            query = select(memories).where(m.id == memory_id, m.scope == scope)
            row = (await c.execute(query)).first()
        return None if row is None else to_memory(row)

    async def get_many(
        self, scope: str, ids: Iterable[int], *, conn: AsyncConnection | None = None
    ) -> list[Memory]:
        """This chat's memories among `ids`, by id."""
        wanted = sorted(set(ids))
        if not wanted:
            return []
        async with self.reading(conn) as c:
            rows = await c.execute(
                select(memories).where(m.scope == scope, m.id.in_(wanted)).order_by(m.id)
            )
            return [to_memory(row) for row in rows]

    async def get_many_ordered(
        self, scope: str, ids: Sequence[int], *, conn: AsyncConnection | None = None
    ) -> list[Memory]:
        """This chat's memories among `ids`, in the order given."""
        by_id = {memory.id: memory for memory in await self.get_many(scope, ids, conn=conn)}
        return [by_id[i] for i in ids if i in by_id]

    async def newest(
        self,
        scope: str,
        *,
        types: Sequence[MemoryType] | None = None,
        status: str | None = "active",
        limit: int | None = None,
        conn: AsyncConnection | None = None,
    ) -> list[Memory]:
        """This chat's memories, newest first, of these types (all when None) and this
        status (any when None)."""
        query = select(memories).where(m.scope == scope).order_by(m.id.desc())
        if types:
            query = query.where(m.type.in_(list(types)))
        if status is not None:
            query = query.where(m.status == status)
        if limit is not None:
            query = query.limit(limit)
        async with self.reading(conn) as c:
            return [to_memory(row) for row in await c.execute(query)]

    async def visible_ids(
        self,
        scope: str,
        now: datetime,
        *,
        retrospective: bool = False,
        conn: AsyncConnection | None = None,
    ) -> set[int]:
        """The ids of every memory a question asked in `scope` at `now` may see (the
        visibility rule, memory_sql.py)."""
        query = select(m.id).where(sql.visible(scope, now, retrospective=retrospective))
        async with self.reading(conn) as c:
            return set((await c.execute(query)).scalars())

    async def recent_texts(
        self, scope: str, type_: str, limit: int, *, conn: AsyncConnection | None = None
    ) -> list[tuple[int, str]]:
        """(id, content) of the latest `limit` unretracted memories of one chat and type."""
        async with self.reading(conn) as c:
            rows = await c.execute(
                select(m.id, m.content)
                .where(m.scope == scope, m.type == type_, m.status != "retracted")
                .order_by(m.id.desc())
                .limit(limit)
            )
            return [(row.id, row.content) for row in rows]

    async def credit(
        self, scope: str, ids: Sequence[int], at: datetime, *, conn: AsyncConnection | None = None
    ) -> None:
        """hit_count + 1 and last_accessed_at = at."""
        await self._accessed(scope, ids, at, conn, hit_count=m.hit_count + 1)

    async def touch(
        self, scope: str, ids: Sequence[int], at: datetime, *, conn: AsyncConnection | None = None
    ) -> None:
        """last_accessed_at = at."""
        await self._accessed(scope, ids, at, conn)

    async def _accessed(
        self,
        scope: str,
        ids: Sequence[int],
        at: datetime,
        conn: AsyncConnection | None,
        **also: Any,
    ) -> None:
        if not ids:
            return
        async with self.writing(conn) as c:
            await c.execute(
                update(memories)
                .where(m.scope == scope, m.id.in_(sorted(set(ids))))
                .values(last_accessed_at=at, **also)
            )
