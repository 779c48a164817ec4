"""The full-text index keeps one column, `bi`: its `uni` column goes.

`uni` held each memory's CJK unigrams for a near-wording stage that was never
built: it was written on every memory write and rebuild and read by no query.
FTS5 cannot drop a column, so the table is made again beside the old one with its
`bi` values copied across by rowid (no tokenising: the values are already what
memory_core/storage/fulltext/fts.py writes), and renamed into place. A downgrade brings
`uni` back empty, which is all any earlier code ever needed of it.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02 18:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _remake(columns: str, values: str) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    # The vocabulary table names memory_fts; it is made again once the new one is in place.
    op.execute("DROP TABLE IF EXISTS memory_fts_vocab")
    op.execute(f"CREATE VIRTUAL TABLE memory_fts_new USING fts5({columns}, tokenize = 'ascii')")
    op.execute(f"INSERT INTO memory_fts_new(rowid, {columns}) SELECT rowid, {values} FROM memory_fts")
    op.execute("DROP TABLE memory_fts")
    op.execute("ALTER TABLE memory_fts_new RENAME TO memory_fts")
    op.execute("CREATE VIRTUAL TABLE memory_fts_vocab USING fts5vocab(memory_fts, 'row')")
    op.execute("INSERT INTO memory_fts(memory_fts) VALUES ('optimize')")


def upgrade() -> None:
    _remake("bi", "bi")


def downgrade() -> None:
    _remake("bi, uni", "bi, ''")
