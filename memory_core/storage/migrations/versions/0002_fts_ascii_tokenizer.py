"""The full-text index keeps every token whole: FTS5's `ascii` tokenizer.

yuji writes the index as space-separated, scope-keyed tokens it has already cut and
normalised itself (memory_core/storage/fulltext/fts.py). `unicode61` cut some of them again:
a combining mark or a letter newer than SQLite's Unicode tables counts as a
separator there, so a token could lose its tail. `ascii` separates on ASCII
whitespace and punctuation only, which never occur inside yuji's tokens. The index
is derived: it is rebuilt here from the memories table.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 20:15:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from memory_core.storage.fulltext import fts

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_VOCAB = "CREATE VIRTUAL TABLE memory_fts_vocab USING fts5vocab(memory_fts, 'row')"


def _recreate(tokenize: str) -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    op.execute("DROP TABLE IF EXISTS memory_fts_vocab")
    op.execute("DROP TABLE IF EXISTS memory_fts")
    op.execute(f"CREATE VIRTUAL TABLE memory_fts USING fts5(bi, uni, tokenize = '{tokenize}')")
    op.execute(_VOCAB)
    insert = sa.text("INSERT INTO memory_fts(rowid, bi, uni) VALUES (:id, :bi, :uni)")
    last_id = 0
    while True:
        rows = bind.execute(
            sa.text(
                "SELECT id, scope, subject, content FROM memories WHERE id > :last "
                "ORDER BY id LIMIT 2000"
            ),
            {"last": last_id},
        ).all()
        if not rows:
            break
        # `uni` stays empty: nothing ever queried it, and 0013 drops it.
        params = [
            {"id": row.id, "bi": fts.document(row.scope, row.subject, row.content), "uni": ""}
            for row in rows
        ]
        bind.execute(insert, params)
        last_id = rows[-1].id


def upgrade() -> None:
    _recreate("ascii")


def downgrade() -> None:
    _recreate("unicode61 remove_diacritics 0")
