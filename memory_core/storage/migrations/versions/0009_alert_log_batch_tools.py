"""The alert log, and how many tool calls a batch made and how many were refused.

`alert_log` keeps every alert and recovery the alert gate sent (what the operator was
told), so the console's overview shows the last seven days across restarts; rows
older than thirty days are pruned as new ones are written. A consolidation batch
records its tool calls and refusals when it ends (batches from before show 0).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02 01:45:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "alert_log",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("recovered", sa.Boolean(), server_default="0", nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_log")),
    )
    with op.batch_alter_table("alert_log", schema=None) as batch_op:
        batch_op.create_index("ix_alert_log_at", ["at"], unique=False)
    with op.batch_alter_table("consolidation_batches", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("tool_calls", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.add_column(sa.Column("refused", sa.Integer(), server_default="0", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("consolidation_batches", schema=None) as batch_op:
        batch_op.drop_column("refused")
        batch_op.drop_column("tool_calls")
    with op.batch_alter_table("alert_log", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_log_at")
    op.drop_table("alert_log")
