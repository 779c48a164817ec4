"""Ranked matches in a full-text index (`memory_fts`, `message_fts`) on either engine.

Both engines hold the same rows (storage/fts.py lays them out) and rank a question's
matches by the same bm25: FTS5's own `bm25()` on SQLite; on PostgreSQL the same
formula in SQL over what migration 0016 keeps beside each index (each row's tokens
with their counts and its length, each token's document frequency, the index's row
and token totals). FTS5's constants and its floor on a common term's IDF are copied,
so a question ranks the same memories first wherever the store lives; ties, which
FTS5 leaves in no stated order, go to the lower rowid on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from sqlalchemy import Float, Integer, column, text
from sqlalchemy.sql.selectable import TextualSelect

from . import fts

Index = Literal["memory_fts", "message_fts"]
K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6


def match_params(dialect: str, scope: str, tokens: Iterable[str]) -> dict[str, Any] | None:
    """The bound values of a `ranked` statement matching rows holding any of these
    tokens of `scope`, or None when there is none to look for."""
    terms = sorted(set(fts.keyed(scope, tokens)))
    if not terms:
        return None
    if dialect == "postgresql":
        return {"match": " | ".join(_lexeme(t) for t in terms), "terms": terms}
    return {"match": "bi : (" + " OR ".join(f'"{t}"' for t in terms) + ")"}


def pg_ranked(index: Index, limit: str, where: str = "") -> TextualSelect:
    """PostgreSQL: (rid, rank) of the `limit` best rows matching `:match`, best (most
    negative, as FTS5 says it) first. `where` adds conditions on the index row `f`."""
    return text(pg_ranked_sql(index, limit, where)).columns(
        column("rid", Integer), column("rank", Float)
    )


def pg_ranked_sql(index: Index, limit: str, where: str = "") -> str:
    """`pg_ranked`'s statement, as text to wrap."""
    tf = "cardinality(u.positions)"
    return f"""WITH s AS (
    SELECT docs::float8 AS n, greatest(tokens::float8 / greatest(docs, 1), 1e-9) AS avgdl
    FROM fts_totals WHERE name = '{index}'
), w AS (
    SELECT v.term, greatest(ln((s.n - v.doc + 0.5) / (v.doc + 0.5)), {IDF_FLOOR}) AS idf
    FROM {index}_vocab AS v, s WHERE v.term = ANY(CAST(:terms AS text[]))
)
SELECT f.rowid AS rid,
    -sum(w.idf * {tf} * {K1 + 1} / ({tf} + {K1} * ({1 - B} + {B} * f.length / s.avgdl))) AS rank
FROM {index} AS f CROSS JOIN s CROSS JOIN LATERAL unnest(f.terms) AS u
JOIN w ON w.term = u.lexeme
WHERE f.terms @@ CAST(CAST(:match AS text) AS tsquery){where}
GROUP BY f.rowid ORDER BY rank, rid LIMIT {limit}"""


def _lexeme(token: str) -> str:
    escaped = token.replace("\\", "\\\\").replace("'", "\\'")
    return f"'{escaped}'"
