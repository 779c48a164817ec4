"""The memory vector index as rows (`memory_vectors`, `vector_builds`; migration
0018): what PostgreSQL deployments read instead of the index file."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import memory_vectors, vector_builds

from . import pgvector

v = memory_vectors.c
b = vector_builds.c
_CHUNK = 500


@dataclass(frozen=True, slots=True)
class VectorRow:
    memory_id: int
    version: int
    scope: str
    subject: str
    text_sha: str
    vector: bytes


@dataclass(frozen=True, slots=True)
class Build:
    generation: int
    fingerprint: str
    dim: int


class VectorRepo(Repository):
    async def build(self, model: str, *, conn: AsyncConnection | None = None) -> Build | None:
        """The model's last build (one short read: the readers' change check)."""
        async with self.reading(conn) as c:
            row = (
                await c.execute(select(b.generation, b.fingerprint, b.dim).where(b.model == model))
            ).first()
        return None if row is None else Build(int(row[0]), str(row[1]), int(row[2]))

    async def rows(
        self,
        model: str,
        *,
        leave_out: Collection[str] = (),
        conn: AsyncConnection | None = None,
    ) -> tuple[Build | None, list[VectorRow]]:
        """The model's build and its rows by (scope, memory id), in one snapshot;
        without the chats in `leave_out` (those pgvector searches in the database)."""
        async with self.reading(conn) as c:
            found = await self.build(model, conn=c)
            query = select(v.memory_id, v.version, v.scope, v.subject, v.text_sha, v.vector).where(
                v.model == model
            )
            if leave_out:
                query = query.where(v.scope.not_in(list(leave_out)))
            result = await c.execute(query.order_by(v.scope, v.memory_id))
            return found, [VectorRow(*r) for r in result]

    async def replace(
        self,
        model: str,
        rows: Sequence[VectorRow],
        *,
        fingerprint: str,
        dim: int,
        at: datetime,
        conn: AsyncConnection | None = None,
    ) -> int:
        """Make the model's rows exactly `rows` (writing only what changed) and move
        its generation on, in one transaction; the new generation."""
        async with self.writing(conn) as c:
            held = {
                (int(r[0]), int(r[1]), str(r[2]))
                for r in await c.execute(
                    select(v.memory_id, v.version, v.text_sha).where(v.model == model)
                )
            }
            wanted = {r.memory_id for r in rows}
            gone = [key[0] for key in held if key[0] not in wanted]
            for start in range(0, len(gone), _CHUNK):
                await c.execute(
                    delete(memory_vectors).where(
                        v.model == model, v.memory_id.in_(gone[start : start + _CHUNK])
                    )
                )
            fresh = [r for r in rows if (r.memory_id, r.version, r.text_sha) not in held]
            changed = [{**asdict(r), "model": model} for r in fresh]
            for start in range(0, len(changed), _CHUNK):
                chunk = changed[start : start + _CHUNK]
                statement = upsert(c, memory_vectors).values(chunk)
                await c.execute(
                    statement.on_conflict_do_update(
                        index_elements=[v.model, v.memory_id],
                        set_={
                            name: statement.excluded[name]
                            for name in ("version", "scope", "subject", "text_sha", "vector")
                        },
                    )
                )
            if await pgvector.has_embedding(c):
                await pgvector.fill(c, model, [(r.memory_id, r.vector) for r in fresh], dim)
            previous = await self.build(model, conn=c)
            generation = 1 if previous is None else previous.generation + 1
            values = {
                "generation": generation,
                "fingerprint": fingerprint,
                "dim": dim,
                "built_at": at,
            }
            if previous is None:
                await c.execute(upsert(c, vector_builds).values(model=model, **values))
            else:
                await c.execute(update(vector_builds).where(b.model == model).values(**values))
        return generation

    async def mark_source(
        self, model: str, fingerprint: str, *, conn: AsyncConnection | None = None
    ) -> None:
        """The index is unchanged and current for `fingerprint`. Rows that came without
        pgvector's copy (`copy-store`, a server that got the extension later) get it
        here, so the HNSW search of a large chat never misses them."""
        async with self.writing(conn) as c:
            await c.execute(
                update(vector_builds).where(b.model == model).values(fingerprint=fingerprint)
            )
            found = await self.build(model, conn=c)
            if found is not None and await pgvector.has_embedding(c):
                await pgvector.fill(c, model, [], found.dim)
