"""PostgreSQL: the append-only guards and the full-text indexes.

SQLite has had both since 0001 (triggers that `RAISE(ABORT)`, FTS5 tables). On
PostgreSQL, which no earlier revision could run on, this revision makes the same
things from what the server has without extensions, and does nothing on SQLite:

- every append-only table refuses UPDATE and DELETE through a trigger raising
  SQLSTATE `YJ001` (storage/failures.py reads it as an append-only violation); an
  archived message may be updated only into its redaction tombstone, the rule 0005
  gave SQLite;
- `memory_fts` and `message_fts` hold what the FTS5 tables hold (rowid, `bi`: the
  chat-keyed tokens of storage/fulltext/fts.py) plus, filled in by a trigger from `bi`, the
  tokens as a `tsvector` with their positions (a GIN index finds the rows holding
  any of a question's tokens; the positions give each token's count for bm25) and
  the row's token count. `<index>_vocab` keeps each token's document frequency,
  `<index>_postings` each (token, row)'s count and the row's length (what bm25 reads:
  a question's few tokens lead straight to their rows, as in FTS5's own index), and
  `fts_totals` each index's row and token counts, all by triggers in the writing
  transaction, so bm25 and every recall feature read the same numbers FTS5 gives.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-04 20:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from memory_core.storage.fulltext import fts

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY = (
    "experience_attachments",
    "memory_versions",
    "memory_evidence",
    "cards",
    "diaries",
    "redactions",
)
TOMBSTONE = "[此消息已应本人要求删除]"
"""Kept equal to memory_core.storage.porting.redaction_repo.TOMBSTONE (a test checks)."""
_UNCHANGED = (
    "id",
    "scope",
    "fingerprint",
    "sender_id",
    "is_bot",
    "reply_to",
    "sent_at",
    "received_at",
    "source",
)
INDEXES = ("memory_fts", "message_fts")

_GUARDS = [
    """CREATE FUNCTION yuji_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'YJ001';
END $$""",
    f"""CREATE FUNCTION yuji_experience_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.text = '{TOMBSTONE}' AND NEW.segments = '[]' AND NEW.sender_name = ''
        AND ({", ".join(f"NEW.{c}" for c in _UNCHANGED)})
            IS NOT DISTINCT FROM ({", ".join(f"OLD.{c}" for c in _UNCHANGED)})
        AND EXISTS (SELECT 1 FROM redactions r WHERE r.experience_id = OLD.id)
    THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'experiences is append-only' USING ERRCODE = 'YJ001';
END $$""",
    "CREATE TRIGGER experiences_no_update BEFORE UPDATE ON experiences "
    "FOR EACH ROW EXECUTE FUNCTION yuji_experience_update()",
    "CREATE TRIGGER experiences_no_delete BEFORE DELETE ON experiences "
    "FOR EACH ROW EXECUTE FUNCTION yuji_append_only()",
    *(
        f"CREATE TRIGGER {table}_no_{action.lower()} BEFORE {action} ON {table} "
        "FOR EACH ROW EXECUTE FUNCTION yuji_append_only()"
        for table in APPEND_ONLY
        for action in ("UPDATE", "DELETE")
    ),
]

# A token's positions (1-based, capped where tsvector caps them) make its count in
# the row: the `tf` of bm25. Tokens hold no quote or backslash (storage/fulltext/fts.py keeps
# letters and digits only); they are escaped all the same.
_TERMS = r"""CREATE FUNCTION yuji_fts_terms(bi text, OUT terms tsvector, OUT length integer)
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(string_agg(
               '''' || replace(replace(tok, '\', '\\'), '''', '''''') || ''':' || pos, ' '
           ), '')::tsvector,
           coalesce(sum(n), 0)::integer
    FROM (
        SELECT tok, string_agg(least(ord, 16383)::text, ',' ORDER BY ord) AS pos,
               count(*) AS n
        FROM unnest(string_to_array(bi, ' ')) WITH ORDINALITY AS u(tok, ord)
        WHERE tok <> ''
        GROUP BY tok
    ) AS t
$$"""


def _index(name: str) -> list[str]:
    return [
        f"CREATE TABLE {name} (rowid integer PRIMARY KEY, bi text NOT NULL, "
        "terms tsvector NOT NULL DEFAULT '', length integer NOT NULL DEFAULT 0)",
        f"CREATE INDEX ix_{name}_terms ON {name} USING gin (terms)",
        f"CREATE TABLE {name}_vocab (term text PRIMARY KEY, doc integer NOT NULL)",
        f"CREATE TABLE {name}_postings (term text NOT NULL, rowid integer NOT NULL, "
        "tf integer NOT NULL, length integer NOT NULL, PRIMARY KEY (term, rowid))",
        f"INSERT INTO fts_totals (name, docs, tokens) VALUES ('{name}', 0, 0)",
        f"""CREATE FUNCTION {name}_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT t.terms, t.length INTO NEW.terms, NEW.length FROM yuji_fts_terms(NEW.bi) AS t;
    RETURN NEW;
END $$""",
        # Statement-level, over the statement's transition table: a batch of rows
        # counts its tokens once, and `fts_totals` (one row per index) is updated
        # once per statement, not once per row.
        f"""CREATE FUNCTION {name}_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {name}_vocab AS v (term, doc)
        SELECT u.lexeme, count(*) FROM added AS a, unnest(a.terms) AS u GROUP BY u.lexeme
        ON CONFLICT (term) DO UPDATE SET doc = v.doc + excluded.doc;
    INSERT INTO {name}_postings (term, rowid, tf, length)
        SELECT u.lexeme, a.rowid, cardinality(u.positions), a.length
        FROM added AS a, unnest(a.terms) AS u;
    UPDATE fts_totals SET docs = docs + t.n, tokens = tokens + t.len
        FROM (SELECT count(*) AS n, coalesce(sum(length), 0) AS len FROM added) AS t
        WHERE name = '{name}';
    RETURN NULL;
END $$""",
        f"""CREATE FUNCTION {name}_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE {name}_vocab AS v SET doc = v.doc - g.n
        FROM (SELECT u.lexeme, count(*) AS n FROM removed AS r, unnest(r.terms) AS u
              GROUP BY u.lexeme) AS g
        WHERE v.term = g.lexeme;
    DELETE FROM {name}_vocab AS v WHERE v.doc <= 0 AND v.term IN (
        SELECT u.lexeme FROM removed AS r, unnest(r.terms) AS u);
    DELETE FROM {name}_postings AS p USING removed AS r, unnest(r.terms) AS u
        WHERE p.term = u.lexeme AND p.rowid = r.rowid;
    UPDATE fts_totals SET docs = docs - t.n, tokens = tokens - t.len
        FROM (SELECT count(*) AS n, coalesce(sum(length), 0) AS len FROM removed) AS t
        WHERE name = '{name}';
    RETURN NULL;
END $$""",
        f"CREATE TRIGGER {name}_terms BEFORE INSERT OR UPDATE OF bi ON {name} "
        f"FOR EACH ROW EXECUTE FUNCTION {name}_terms()",
        f"CREATE TRIGGER {name}_added AFTER INSERT ON {name} REFERENCING NEW TABLE AS added "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {name}_added()",
        f"CREATE TRIGGER {name}_removed AFTER DELETE ON {name} "
        f"REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION {name}_removed()",
    ]


_BACKLOG = sa.text(
    "SELECT e.id, e.scope, e.sender_name, e.text FROM experiences e "
    "LEFT JOIN consolidation_cursors c ON c.scope = e.scope "
    "WHERE e.id > COALESCE(c.acked_id, 0) AND NOT e.is_bot "
    "AND NOT EXISTS (SELECT 1 FROM redactions r WHERE r.experience_id = e.id)"
)


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    statements = [
        *_GUARDS,
        _TERMS,
        "CREATE TABLE fts_totals (name text PRIMARY KEY, docs bigint NOT NULL, "
        "tokens bigint NOT NULL)",
    ]
    for name in INDEXES:
        statements += _index(name)
    for statement in statements:
        bind.exec_driver_sql(statement)
    # Whatever the archive and the memories already hold is indexed as 0002 and 0015
    # indexed it on SQLite.
    memories = [
        {"id": r.id, "bi": fts.document(r.scope, r.subject, r.content)}
        for r in bind.execute(sa.text("SELECT id, scope, subject, content FROM memories"))
    ]
    messages = [
        {"id": r.id, "bi": fts.document(r.scope, r.sender_name, r.text)}
        for r in bind.execute(_BACKLOG)
    ]
    for name, rows in (("memory_fts", memories), ("message_fts", messages)):
        if rows:  # one statement: the counting triggers run once over all of them
            bind.execute(
                sa.text(
                    f"INSERT INTO {name} (rowid, bi) SELECT * FROM "
                    "unnest(CAST(:ids AS integer[]), CAST(:bis AS text[]))"
                ),
                {"ids": [r["id"] for r in rows], "bis": [r["bi"] for r in rows]},
            )


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    for name in INDEXES:
        bind.exec_driver_sql(f"DROP TABLE {name}_vocab")
        bind.exec_driver_sql(f"DROP TABLE {name}_postings")
        bind.exec_driver_sql(f"DROP TABLE {name}")
        bind.exec_driver_sql(f"DROP FUNCTION {name}_terms(), {name}_added(), {name}_removed()")
    bind.exec_driver_sql("DROP TABLE fts_totals")
    bind.exec_driver_sql("DROP FUNCTION yuji_fts_terms(text)")
    for table in (*APPEND_ONLY, "experiences"):
        for action in ("update", "delete"):
            bind.exec_driver_sql(f"DROP TRIGGER {table}_no_{action} ON {table}")
    bind.exec_driver_sql("DROP FUNCTION yuji_append_only(), yuji_experience_update()")
