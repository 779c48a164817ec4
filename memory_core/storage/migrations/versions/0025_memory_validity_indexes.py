"""Indexes on a memory's validity per chat: a wake that names a day ("上周六", "on 7
May") looks for the memories whose validity starts in it or, bounded, overlaps it. Without
them that read went through every memory of the chat (2.7 ms at 10k, growing with it).
The second is partial: only bounded validities (most memories hold until changed).

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-06 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_memories_scope_valid_from", "memories", ["scope", "valid_from"])
    bounded = sa.text("valid_to IS NOT NULL")
    op.create_index(
        "ix_memories_scope_bounded",
        "memories",
        ["scope", "valid_to"],
        sqlite_where=bounded,
        postgresql_where=bounded,
    )


def downgrade() -> None:
    op.drop_index("ix_memories_scope_bounded", table_name="memories")
    op.drop_index("ix_memories_scope_valid_from", table_name="memories")
