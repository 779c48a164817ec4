"""MemoryRepo's derived full-text index (storage/fulltext/fts.py lays it out): indexing,
rebuilding, optimising, dropping a forgotten person's rows, and the bm25 candidate
queries of recall and the evaluation baseline."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Select, delete, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.engine import Database
from memory_core.storage.fulltext import fts
from memory_core.storage.fulltext.ranked import add_rows, match_params
from memory_core.types import Memory

from . import memory_sql as sql
from .memory_reads import MemoryReads
from .memory_sql import m, to_memory

_CHUNK = 500


class MemorySearch(MemoryReads):
    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self._word_statements: dict[tuple[bool, int], Select[Any]] = {}
        """Recall's words statement by (with_past, limit): built once, reused."""

    async def index(
        self, written: Sequence[Memory], *, conn: AsyncConnection | None = None
    ) -> None:
        """Index freshly inserted memories (their ids are new, so nothing to delete)."""
        params = [
            _index_params(memory.id, memory.scope, memory.subject, memory.content)
            for memory in written
        ]
        if not params:
            return
        async with self.writing(conn) as c:
            await add_rows(c, "memory_fts", params)

    async def reindex(self, memory: Memory, *, conn: AsyncConnection | None = None) -> None:
        """(Re)index one memory under its id."""
        async with self.writing(conn) as c:
            await c.execute(text("DELETE FROM memory_fts WHERE rowid = :id"), {"id": memory.id})
            await add_rows(
                c,
                "memory_fts",
                [_index_params(memory.id, memory.scope, memory.subject, memory.content)],
            )

    async def rebuild_index(self, batch: int = 2000, *, conn: AsyncConnection | None = None) -> int:
        """Drop every index row and index every memory again from the truth tables."""
        count = 0
        last_id = 0
        async with self.writing(conn) as c:
            await c.execute(text("DELETE FROM memory_fts"))
            while True:
                rows = (
                    await c.execute(
                        select(m.id, m.scope, m.subject, m.content)
                        .where(m.id > last_id)
                        .order_by(m.id)
                        .limit(batch)
                    )
                ).all()
                if not rows:
                    break
                await add_rows(
                    c,
                    "memory_fts",
                    [_index_params(r.id, r.scope, r.subject, r.content) for r in rows],
                )
                count += len(rows)
                last_id = rows[-1].id
            if c.dialect.name == "sqlite":
                await c.execute(text("INSERT INTO memory_fts(memory_fts) VALUES ('optimize')"))
        return count

    async def document_frequencies(
        self, scope: str, tokens: Iterable[str], *, conn: AsyncConnection | None = None
    ) -> dict[str, int]:
        """Per-chat document frequency of each token (absent tokens are left out)."""
        keyed = sorted(set(fts.keyed(scope, tokens)))
        if not keyed:
            return {}
        placeholders = ", ".join(f":t{i}" for i in range(len(keyed)))
        async with self.reading(conn) as c:
            rows = await c.execute(
                text(f"SELECT term, doc FROM memory_fts_vocab WHERE term IN ({placeholders})"),
                {f"t{i}": token for i, token in enumerate(keyed)},
            )
            return {fts.unkey(row.term): int(row.doc) for row in rows}

    async def word_matches(
        self,
        scope: str,
        tokens: Iterable[str],
        now: datetime,
        *,
        limit: int,
        ahead: bool = False,
        conn: AsyncConnection | None = None,
    ) -> list[tuple[Memory, frozenset[str]]]:
        """The `limit` best (bm25) memories visible now holding any of these bigram
        tokens, each with the bigram tokens it holds; `ahead`: among the chat's memories
        that start after `now` instead (a plan dated ahead, which visibility hides until
        its day)."""
        where = sql.upcoming(scope, now) if ahead else sql.visible(scope, now)
        async with self.reading(conn) as c:
            match = match_params(c.dialect.name, scope, tokens)
            if match is None:
                return []
            query = sql.candidates_with_columns(where, limit, c.dialect.name)
            rows = await c.execute(query, match)
            return [(to_memory(row), fts.column_tokens(row.bi)) for row in rows]

    async def word_candidates(
        self,
        scope: str,
        tokens: Iterable[str],
        now: datetime,
        *,
        with_past: bool,
        limit: int,
        conn: AsyncConnection | None = None,
    ) -> list[Memory]:
        """Recall's words stage: the `limit` best (bm25) visible memories holding any
        of these bigram tokens (`with_past`: also the ones whose validity ended). Its
        statement is built once per (with_past, limit) and reused question after
        question."""
        async with self.reading(conn) as c:
            match = match_params(c.dialect.name, scope, tokens)
            if match is None:
                return []
            key = (with_past, limit)
            query = self._word_statements.get(key)
            if query is None:
                query = sql.candidates(sql.visible_bound(with_past), limit, c.dialect.name)
                self._word_statements[key] = query
            rows = await c.execute(query, {**match, **sql.visible_params(scope, now)})
            return [to_memory(row) for row in rows]

    async def bm25(
        self, scope: str, tokens: Iterable[str], *, limit: int, conn: AsyncConnection | None = None
    ) -> list[Memory]:
        """Plain bm25 top-`limit` of this chat's active memories holding any of these
        bigram tokens (the evaluation baseline: no validity, no stages)."""
        async with self.reading(conn) as c:
            match = match_params(c.dialect.name, scope, tokens)
            if match is None:
                return []
            query = sql.bm25((m.scope == scope) & (m.status == "active"), limit, c.dialect.name)
            ranked = [row.id for row in await c.execute(query, match)]
            return await self.get_many_ordered(scope, ranked, conn=c)

    async def fts_tables(self, *, conn: AsyncConnection | None = None) -> list[str]:
        """The derived full-text tables present (named memory_fts*), for optimisation."""
        if not self.db.is_sqlite:
            return ["memory_fts"] if self.db.is_postgres else []
        async with self.reading(conn) as c:
            rows = await c.exec_driver_sql(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'memory_fts%' "
                "AND sql LIKE '%USING fts5(%'"
            )
            return [str(r[0]) for r in rows]

    async def optimize_derived(self, *, conn: AsyncConnection | None = None) -> list[str]:
        """Merge the FTS5 segments of the derived indexes (PostgreSQL: refresh what its
        planner knows of them; autovacuum does the rest) and refresh planner stats."""
        done: list[str] = []
        async with self.writing(conn) as c:
            for name in await self.fts_tables(conn=c):
                if self.db.is_postgres:
                    await c.exec_driver_sql(f"ANALYZE {name}, {name}_vocab")
                else:
                    await c.exec_driver_sql(f"INSERT INTO {name}({name}) VALUES ('optimize')")
                done.append(name)
            if self.db.is_sqlite:
                await c.exec_driver_sql("PRAGMA optimize")
        return done

    async def drop_index_rows(
        self, memory_ids: Sequence[int], *, conn: AsyncConnection | None = None
    ) -> None:
        """These memories leave the derived full-text index (a forget request)."""
        async with self.writing(conn) as c:
            for start in range(0, len(memory_ids), _CHUNK):
                chunk = list(memory_ids[start : start + _CHUNK])
                await c.execute(delete(sql.memory_fts).where(sql.memory_fts.c.rowid.in_(chunk)))


def _index_params(memory_id: int, scope: str, subject: str, content: str) -> dict[str, Any]:
    return {"id": memory_id, "bi": fts.document(scope, subject, content)}
