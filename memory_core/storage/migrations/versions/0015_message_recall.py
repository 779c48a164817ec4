"""Recent chat becomes a recall source: a full-text index and vectors of messages.

`message_fts` is an FTS5 table laid out exactly like `memory_fts` (one column `bi` of
chat-keyed bigram tokens, rowid = experience id; storage/fulltext/fts.py): the archive writer
indexes every message it commits in the same transaction, and consolidation's
acknowledgement and a forget request take rows out. `message_vectors` holds the
embedding of each message not yet acknowledged (memory_core/vectors/messages.py).
Both are derived. The upgrade indexes the messages each chat has not had
acknowledged yet (the bot's own and redacted ones never); a downgrade drops both.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-04 18:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from memory_core.storage.fulltext import fts

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BACKLOG = sa.text(
    "SELECT e.id, e.scope, e.sender_name, e.text FROM experiences e "
    "LEFT JOIN consolidation_cursors c ON c.scope = e.scope "
    "WHERE e.id > COALESCE(c.acked_id, 0) AND e.is_bot = 0 "
    "AND NOT EXISTS (SELECT 1 FROM redactions r WHERE r.experience_id = e.id)"
)


def upgrade() -> None:
    op.create_table(
        "message_vectors",
        sa.Column("experience_id", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["experience_id"],
            ["experiences.id"],
            name="fk_message_vectors_experience_id_experiences",
        ),
        sa.PrimaryKeyConstraint("experience_id", name="pk_message_vectors"),
    )
    op.create_index(
        "ix_message_vectors_scope_experience_id",
        "message_vectors",
        ["scope", "experience_id"],
    )
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    op.execute("CREATE VIRTUAL TABLE message_fts USING fts5(bi, tokenize = 'ascii')")
    rows = [
        {"id": r.id, "bi": fts.document(r.scope, r.sender_name, r.text)}
        for r in bind.execute(_BACKLOG)
    ]
    if rows:
        bind.execute(sa.text("INSERT INTO message_fts(rowid, bi) VALUES (:id, :bi)"), rows)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE IF EXISTS message_fts")
    op.drop_index("ix_message_vectors_scope_experience_id", table_name="message_vectors")
    op.drop_table("message_vectors")
