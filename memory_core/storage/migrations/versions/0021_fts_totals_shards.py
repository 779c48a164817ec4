"""PostgreSQL: each full-text index's totals in shards, so archive inserts of
different chats commit side by side.

0016 kept one `fts_totals` row per index, updated by the counting triggers of every
write. Archive inserts of different chats now run concurrently (storage/engine.py,
`write(chats=...)`), and one row updated by all of them would make each wait for the
last one's commit: the single writer again, at the end of each transaction. So the
totals are split over `SHARDS` rows per index, by chat: a row's chat key (the prefix
of its every token, storage/fulltext/fts.py) picks its shard, and a reader sums the shards.
Two chats sharing a shard only wait for each other there. A statement updates its
shards in ascending order, after its chats' turns were taken in one order too, so no
two writers can wait for each other in a circle. The vocabularies and postings need
nothing: their rows are keyed by tokens that carry their chat's key.

SQLite is untouched (FTS5 keeps its own totals).

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-04 23:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from memory_core.storage.fulltext import fts

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SHARDS = 64  # a power of two: the shard is the key's hash & (SHARDS - 1)
INDEXES = ("memory_fts", "message_fts")


def _counting(name: str, totals: str) -> list[str]:
    """The two statement-level counting functions of `name`, with `totals` (a format
    string of `{sign}` and `{rows}`, the transition table) keeping the totals."""
    return [
        f"""CREATE OR REPLACE FUNCTION {name}_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {name}_vocab AS v (term, doc)
        SELECT u.lexeme, count(*) FROM added AS a, unnest(a.terms) AS u GROUP BY u.lexeme
        ON CONFLICT (term) DO UPDATE SET doc = v.doc + excluded.doc;
    INSERT INTO {name}_postings (term, rowid, tf, length)
        SELECT u.lexeme, a.rowid, cardinality(u.positions), a.length
        FROM added AS a, unnest(a.terms) AS u;
    {totals.format(name=name, sign="+", rows="added")};
    RETURN NULL;
END $$""",
        f"""CREATE OR REPLACE FUNCTION {name}_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE {name}_vocab AS v SET doc = v.doc - g.n
        FROM (SELECT u.lexeme, count(*) AS n FROM removed AS r, unnest(r.terms) AS u
              GROUP BY u.lexeme) AS g
        WHERE v.term = g.lexeme;
    DELETE FROM {name}_vocab AS v WHERE v.doc <= 0 AND v.term IN (
        SELECT u.lexeme FROM removed AS r, unnest(r.terms) AS u);
    DELETE FROM {name}_postings AS p USING removed AS r, unnest(r.terms) AS u
        WHERE p.term = u.lexeme AND p.rowid = r.rowid;
    {totals.format(name=name, sign="-", rows="removed")};
    RETURN NULL;
END $$""",
    ]


SHARDED = (
    "INSERT INTO fts_totals AS s (name, shard, docs, tokens) "
    f"SELECT '{{name}}', hashtext(left(bi, {fts.KEY_LENGTH})) & {SHARDS - 1}, "
    "{sign}count(*), {sign}coalesce(sum(length), 0) FROM {rows} GROUP BY 2 ORDER BY 2 "
    "ON CONFLICT (name, shard) DO UPDATE "
    "SET docs = s.docs + excluded.docs, tokens = s.tokens + excluded.tokens"
)
ONE_ROW = (  # 0016's
    "UPDATE fts_totals SET docs = docs {sign} t.n, tokens = tokens {sign} t.len "
    "FROM (SELECT count(*) AS n, coalesce(sum(length), 0) AS len FROM {rows}) AS t "
    "WHERE name = '{name}'"
)


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    for statement in (
        "ALTER TABLE fts_totals ADD COLUMN shard integer NOT NULL DEFAULT 0",
        "ALTER TABLE fts_totals DROP CONSTRAINT fts_totals_pkey",
        "ALTER TABLE fts_totals ADD PRIMARY KEY (name, shard)",
        *(s for name in INDEXES for s in _counting(name, SHARDED)),
    ):
        bind.exec_driver_sql(statement)


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    for statement in (
        *(s for name in INDEXES for s in _counting(name, ONE_ROW)),
        "CREATE TABLE fts_totals_one AS SELECT name, sum(docs)::bigint AS docs, "
        "sum(tokens)::bigint AS tokens FROM fts_totals GROUP BY name",
        "DELETE FROM fts_totals",
        "ALTER TABLE fts_totals DROP CONSTRAINT fts_totals_pkey",
        "ALTER TABLE fts_totals DROP COLUMN shard",
        "ALTER TABLE fts_totals ADD PRIMARY KEY (name)",
        "INSERT INTO fts_totals (name, docs, tokens) SELECT name, docs, tokens FROM fts_totals_one",
        "DROP TABLE fts_totals_one",
    ):
        bind.exec_driver_sql(statement)
