"""pgvector on PostgreSQL, where the server has it: `memory_vectors.embedding`.

The bytea column stays the source of truth (what `yuji embed` reuses and what
`copy-store` copies); `embedding` holds the same float32 values as a pgvector
`vector` so a chat too large to score in process is searched by an HNSW index
(storage/vectors/pgvector.py makes one per dimension when a build first writes it). The type
has no fixed dimension because each model has its own.

A server without the extension, or a role that may not create it, keeps the bytea
path: the step is skipped, never an error. SQLite is untouched.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-05 13:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.exc import DBAPIError

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    available = bind.execute(
        sa.text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
    ).first()
    if available is None:
        return
    # In a savepoint: a role without the right to create it must not abort the rest of
    # the migration's transaction.
    try:
        with bind.begin_nested():
            bind.execute(sa.text("CREATE EXTENSION IF NOT EXISTS vector"))
    except DBAPIError:
        return
    bind.execute(sa.text("ALTER TABLE memory_vectors ADD COLUMN IF NOT EXISTS embedding vector"))


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    # The HNSW indexes go with the column; the extension stays (other tables may use it).
    op.execute("ALTER TABLE memory_vectors DROP COLUMN IF EXISTS embedding")
