"""Ranked matches in a full-text index (`memory_fts`, `message_fts`) on either engine.

Both engines hold the same rows (storage/fulltext/fts.py lays them out) and rank a question's
matches by the same bm25: FTS5's own `bm25()` on SQLite; on PostgreSQL the same
formula in SQL over what migration 0016 keeps beside each index (each token's rows
with its count there and the row's length, each token's document frequency, the
index's row and token totals). FTS5's constants and its floor on a common term's IDF are copied,
so a question ranks the same memories first wherever the store lives; ties, which
FTS5 leaves in no stated order, go to the lower rowid on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from sqlalchemy import Float, Integer, column, text
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.selectable import TextualSelect

from . import fts

Index = Literal["memory_fts", "message_fts"]
K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6


async def add_rows(conn: AsyncConnection, index: Index, rows: Sequence[dict[str, Any]]) -> None:
    """Index rows ({"id", "bi"}) in the caller's transaction. On PostgreSQL one
    statement for all of them: the triggers that count tokens run once per statement."""
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        await conn.execute(
            text(
                f"INSERT INTO {index} (rowid, bi) SELECT * FROM "
                "unnest(CAST(:ids AS integer[]), CAST(:bis AS text[]))"
            ),
            {"ids": [int(r["id"]) for r in rows], "bis": [str(r["bi"]) for r in rows]},
        )
    else:
        await conn.execute(text(f"INSERT INTO {index}(rowid, bi) VALUES (:id, :bi)"), list(rows))


def match_params(dialect: str, scope: str, tokens: Iterable[str]) -> dict[str, Any] | None:
    """The bound values of a `ranked` statement matching rows holding any of these
    tokens of `scope`, or None when there is none to look for."""
    terms = sorted(set(fts.keyed(scope, tokens)))
    if not terms:
        return None
    if dialect == "postgresql":
        return {"terms": terms}
    return {"match": "bi : (" + " OR ".join(f'"{t}"' for t in terms) + ")"}


def pg_ranked(index: Index, limit: str, where: str = "") -> TextualSelect:
    """PostgreSQL: (rid, rank) of the `limit` best rows holding any of `:terms`, best
    (most negative, as FTS5 says it) first. `where` adds conditions on `p.rowid`."""
    return text(pg_ranked_sql(index, limit, where)).columns(
        column("rid", Integer), column("rank", Float)
    )


def pg_ranked_sql(index: Index, limit: str, where: str = "") -> str:
    """`pg_ranked`'s statement, as text to wrap. It reads the postings of the
    question's tokens only: the condition on `p.term` itself lets the planner read
    one index range per token (through the join alone it hashes every posting of the
    index); `where` may name `p.rowid`."""
    tf = "p.tf"
    return f"""WITH s AS (
    SELECT sum(docs)::float8 AS n,
        greatest(sum(tokens)::float8 / greatest(sum(docs), 1), 1e-9) AS avgdl
    FROM fts_totals WHERE name = '{index}'
), w AS (
    SELECT v.term, greatest(ln((s.n - v.doc + 0.5) / (v.doc + 0.5)), {IDF_FLOOR}) AS idf
    FROM {index}_vocab AS v, s WHERE v.term = ANY(CAST(:terms AS text[]))
)
SELECT p.rowid AS rid,
    -sum(w.idf * {tf} * {K1 + 1} / ({tf} + {K1} * ({1 - B} + {B} * p.length / s.avgdl))) AS rank
FROM {index}_postings AS p JOIN w ON w.term = p.term CROSS JOIN s
WHERE p.term = ANY(CAST(:terms AS text[])){where}
GROUP BY p.rowid ORDER BY rank, rid LIMIT {limit}"""
