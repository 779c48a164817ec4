"""`copy_progress`: how far `yuji copy-store` got in the store it copies into.

One row per copied table (the last primary key copied, the rows so far, done or not),
written in the same transaction as each chunk of rows; a resumed copy starts there.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "copy_progress",
        sa.Column("table_name", sa.String(64), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("last_key", sa.Text(), nullable=True),
        sa.Column("copied", sa.Integer(), nullable=False),
        sa.Column("done", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("table_name", name=op.f("pk_copy_progress")),
    )


def downgrade() -> None:
    op.drop_table("copy_progress")
