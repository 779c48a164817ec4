"""`chat_names`: what each chat is called (the group's name, the person's nickname),
as the QQ client says it on connect and when it changes, so the console can show
names beside the ids.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-06 01:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chat_names",
        sa.Column("scope", sa.String(64), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scope", name=op.f("pk_chat_names")),
    )


def downgrade() -> None:
    op.drop_table("chat_names")
