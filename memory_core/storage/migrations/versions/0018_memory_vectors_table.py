"""The memory vector index as rows: where PostgreSQL keeps it.

SQLite keeps the index in a file beside the database (vectors/store.py), which one
process reads memory-mapped. Several bot processes on one PostgreSQL server share
one index instead: the rows of `memory_vectors` and, per model, the build that
wrote them (`vector_builds.generation` tells the readers to reload). The tables are
made on both engines, so the schema is one; SQLite leaves them empty.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-04 21:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "memory_vectors",
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("memory_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("text_sha", sa.String(length=64), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("model", "memory_id", name="pk_memory_vectors"),
    )
    op.create_table(
        "vector_builds",
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("fingerprint", sa.Text(), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("built_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("model", name="pk_vector_builds"),
    )


def downgrade() -> None:
    op.drop_table("vector_builds")
    op.drop_table("memory_vectors")
