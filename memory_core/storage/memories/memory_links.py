"""MemoryRepo's relations between memories and a chat's aliases."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import literal_column, or_, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import aliases, memory_relations
from memory_core.types import RelationKind


class MemoryLinks(Repository):
    async def add_relation(
        self,
        scope: str,
        src_id: int,
        dst_id: int,
        kind: RelationKind,
        *,
        reason: str,
        at: datetime,
        conn: AsyncConnection | None = None,
    ) -> None:
        """Insert once; the same (src, dst, kind) again is a no-op."""
        r = memory_relations.c
        async with self.writing(conn) as c:
            await c.execute(
                upsert(c, memory_relations)
                .values(
                    scope=scope,
                    src_id=src_id,
                    dst_id=dst_id,
                    kind=kind,
                    reason=reason,
                    created_at=at,
                )
                .on_conflict_do_nothing(index_elements=[r.src_id, r.dst_id, r.kind])
            )

    async def relations(
        self,
        scope: str,
        ids: Iterable[int],
        kinds: Sequence[RelationKind],
        *,
        conn: AsyncConnection | None = None,
    ) -> list[tuple[int, int, RelationKind]]:
        """(src, dst, kind) edges of this chat touching any of `ids`."""
        wanted = sorted(set(ids))
        if not wanted or not kinds:
            return []
        r = memory_relations.c
        async with self.reading(conn) as c:
            rows = await c.execute(
                select(r.src_id, r.dst_id, r.kind).where(
                    r.scope == scope,
                    r.kind.in_(list(kinds)),
                    or_(r.src_id.in_(wanted), r.dst_id.in_(wanted)),
                )
            )
            return [(row.src_id, row.dst_id, row.kind) for row in rows]

    async def has_replaced(self, scope: str, *, conn: AsyncConnection | None = None) -> bool:
        """Whether any memory of this chat was replaced by a newer version."""
        r = memory_relations.c
        async with self.reading(conn) as c:
            found = await c.execute(
                select(literal_column("1")).where(r.scope == scope, r.kind == "supersedes").limit(1)
            )
            return found.first() is not None

    async def upsert_alias(
        self,
        scope: str,
        alias: str,
        canonical: str,
        at: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        """Map `alias` to `canonical` in this chat (a new mapping, or a changed one)."""
        a = aliases.c
        async with self.writing(conn) as c:
            await c.execute(
                upsert(c, aliases)
                .values(scope=scope, alias=alias, canonical=canonical, created_at=at)
                .on_conflict_do_update(
                    index_elements=[a.scope, a.alias], set_={"canonical": canonical}
                )
            )

    async def alias_map(self, scope: str, *, conn: AsyncConnection | None = None) -> dict[str, str]:
        a = aliases.c
        async with self.reading(conn) as c:
            rows = await c.execute(select(a.alias, a.canonical).where(a.scope == scope))
            return {row.alias: row.canonical for row in rows}

    async def scope_names(
        self, scope: str, *, conn: AsyncConnection | None = None
    ) -> tuple[int, list[str], dict[str, str]]:
        """In one round trip: the chat's memory count, distinct subjects and aliases."""
        async with self.reading(conn) as c:
            rows = await c.execute(
                text(
                    "SELECT 0 AS k, CAST(count(*) AS TEXT) AS a, NULL AS b FROM memories"
                    " WHERE scope = :scope"
                    " UNION ALL SELECT 1, subject, NULL FROM"
                    " (SELECT DISTINCT subject FROM memories WHERE scope = :scope) AS s"
                    " UNION ALL SELECT 2, alias, canonical FROM aliases WHERE scope = :scope"
                ),
                {"scope": scope},
            )
            n, subjects_, aliases_ = 0, [], {}
            for kind, a, b in rows:
                if kind == 0:
                    n = int(a)
                elif kind == 1:
                    subjects_.append(str(a))
                else:
                    aliases_[str(a)] = str(b)
        return n, subjects_, aliases_
