"""The web console: its audit table, live tunable overrides, and each reply's blocks.

`console_audit` records every change made through the console (what, which object,
when, from which address); `console_overrides` keeps tunables changed live;
`injections.blocks` keeps what each reply's prompt was given, block by block.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 22:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "console_audit",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("via", sa.String(length=16), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("target", sa.String(length=128), nullable=False),
        sa.Column("detail", sa.Text(), server_default="", nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_console_audit")),
    )
    with op.batch_alter_table("console_audit", schema=None) as batch_op:
        batch_op.create_index("ix_console_audit_at", ["at"], unique=False)
    op.create_table(
        "console_overrides",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_console_overrides")),
    )
    with op.batch_alter_table("injections", schema=None) as batch_op:
        batch_op.add_column(sa.Column("blocks", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("injections", schema=None) as batch_op:
        batch_op.drop_column("blocks")
    op.drop_table("console_overrides")
    with op.batch_alter_table("console_audit", schema=None) as batch_op:
        batch_op.drop_index("ix_console_audit_at")
    op.drop_table("console_audit")
