"""pgvector's side of `memory_vectors` (migration 0020): the `embedding` column, one
HNSW index per dimension, and the two searches a large chat needs.

Only on a PostgreSQL server where the migration could create the extension; every
caller asks `has_embedding` first (once per process: place.py). The bytea column
beside it stays the source of truth; `embedding` carries the same float32 values.

Models of different dimensions share the column, so each dimension has its own
partial expression index, as pgvector documents for mixed dimensions:
`USING hnsw ((embedding::vector(d)) vector_cosine_ops) WHERE (vector_dims(embedding) = d)`.
A query uses it only when it repeats both the cast and the predicate, with `d` a
literal (a bound parameter does not prove the partial predicate), hence the
formatted integers below.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository

_CHUNK = 500
ANALYZE_AFTER = 1000
"""Rows written by one build above which the table's statistics are refreshed."""


def literal(vector: bytes | np.ndarray) -> str:
    """A float32 vector as pgvector's text form. Each float32 widened to a double
    prints a decimal that parses back to the same float32, so nothing is rounded."""
    values = np.frombuffer(vector, dtype=np.float32) if isinstance(vector, bytes) else vector
    return "[" + ",".join(repr(float(x)) for x in np.asarray(values, dtype=np.float32)) + "]"


def index_name(dim: int) -> str:
    return f"ix_memory_vectors_hnsw_{int(dim)}"


def nearest_sql(dim: int) -> TextClause:
    """One chat's nearest rows of one model in the dimension's HNSW index."""
    d = int(dim)
    return text(
        f"SELECT memory_id, 1 - (embedding::vector({d}) <=> CAST(:q AS vector({d})))"
        " FROM memory_vectors WHERE model = :model AND scope = :scope"
        f" AND vector_dims(embedding) = {d}"
        f" ORDER BY embedding::vector({d}) <=> CAST(:q AS vector({d})) LIMIT :k"
    )


async def has_embedding(conn: AsyncConnection) -> bool:
    """Whether migration 0020 found pgvector here and added the column."""
    if conn.dialect.name != "postgresql":
        return False
    found = await conn.execute(
        text(
            "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()"
            " AND table_name = 'memory_vectors' AND column_name = 'embedding'"
        )
    )
    return found.first() is not None


async def searchable(conn: AsyncConnection) -> bool:
    """The column is there and pgvector is 0.8 or newer: its iterative index scan is
    what keeps one chat's search from coming back short (`PgvectorRepo.nearest`)."""
    if not await has_embedding(conn):
        return False
    found = await conn.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'"))
    version = found.scalar()
    if version is None:
        return False
    parts = [int(p) for p in str(version).split(".")[:2] if p.isdigit()]
    return tuple(parts) >= (0, 8)


async def fill(
    conn: AsyncConnection, model: str, vectors: Sequence[tuple[int, bytes]], dim: int
) -> None:
    """Write `embedding` for these (memory id, float32 bytes) rows and any row of the
    model still without one, then make sure the dimension's HNSW index exists
    (`VectorRepo.replace` calls this in its transaction)."""
    update = text(
        "UPDATE memory_vectors SET embedding = CAST(:e AS vector)"
        " WHERE model = :model AND memory_id = :id"
    )

    async def write(rows: Sequence[tuple[int, bytes]]) -> None:
        for start in range(0, len(rows), _CHUNK):
            await conn.execute(
                update,
                [
                    {"e": literal(vector), "model": model, "id": memory_id}
                    for memory_id, vector in rows[start : start + _CHUNK]
                ],
            )

    await write(vectors)
    # Then the rows that came without one; after the write above, never these again.
    missing = await conn.execute(
        text(
            "SELECT memory_id, vector FROM memory_vectors"
            " WHERE model = :model AND embedding IS NULL"
        ),
        {"model": model},
    )
    rest = [(int(r[0]), bytes(r[1])) for r in missing]
    await write(rest)
    rows = len(vectors) + len(rest)
    if rows >= ANALYZE_AFTER:
        # Fresh statistics, or the planner, guessing one row per chat, scans the chat
        # instead of walking the HNSW index (autovacuum would only catch up later).
        await conn.execute(text("ANALYZE memory_vectors"))
    d = int(dim)
    await conn.execute(
        text(
            f"CREATE INDEX IF NOT EXISTS {index_name(d)} ON memory_vectors"
            f" USING hnsw ((embedding::vector({d})) vector_cosine_ops)"
            f" WHERE (vector_dims(embedding) = {d})"
        )
    )


class PgvectorRepo(Repository):
    async def large_scopes(
        self, model: str, above: int, *, conn: AsyncConnection | None = None
    ) -> frozenset[str]:
        """The chats holding more than `above` vectors of the model, each with its
        pgvector copy (a chat with a row still waiting for one is scored in process,
        exactly, until a build fills it: `fill`)."""
        async with self.reading(conn) as c:
            result = await c.execute(
                text(
                    "SELECT scope FROM memory_vectors WHERE model = :model GROUP BY scope"
                    " HAVING count(*) > :above AND count(embedding) = count(*)"
                ),
                {"model": model, "above": above},
            )
            return frozenset(str(r[0]) for r in result)

    async def nearest(
        self,
        model: str,
        scope: str,
        dim: int,
        query: np.ndarray,
        k: int,
        *,
        conn: AsyncConnection | None = None,
    ) -> list[tuple[int, float]]:
        """The HNSW index's `k` nearest of one chat (approximate), with their cosines.
        Iterative scan: the index walks on until `k` rows of this model and chat pass
        the filter, instead of stopping at `ef_search` rows of any chat."""
        d = int(dim)
        async with self.reading(conn) as c:
            await c.execute(
                text(
                    "SELECT set_config('hnsw.ef_search', :ef, true),"
                    " set_config('hnsw.iterative_scan', 'relaxed_order', true)"
                ),
                {"ef": str(max(40, 2 * k))},
            )
            result = await c.execute(
                nearest_sql(d), {"q": literal(query), "model": model, "scope": scope, "k": k}
            )
            return [(int(r[0]), float(r[1])) for r in result]

    async def cosines(
        self,
        model: str,
        scope: str,
        query: np.ndarray,
        ids: Sequence[int],
        *,
        conn: AsyncConnection | None = None,
    ) -> list[tuple[int, float]]:
        """The exact cosine of each of these memories of this chat that has a vector."""
        if not ids:
            return []
        async with self.reading(conn) as c:
            result = await c.execute(
                text(
                    "SELECT memory_id, 1 - (embedding <=> CAST(:q AS vector))"
                    " FROM memory_vectors WHERE model = :model AND scope = :scope"
                    " AND memory_id = ANY(:ids) AND embedding IS NOT NULL"
                ),
                {"q": literal(query), "model": model, "scope": scope, "ids": list(ids)},
            )
            return [(int(r[0]), float(r[1])) for r in result]

    async def indexes(self, *, conn: AsyncConnection | None = None) -> list[str]:
        """The names of the HNSW indexes (status, tests)."""
        async with self.reading(conn) as c:
            result = await c.execute(
                text(
                    "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_vectors'"
                    " AND indexname LIKE 'ix_memory_vectors_hnsw_%' ORDER BY indexname"
                )
            )
            return [str(r[0]) for r in result]
