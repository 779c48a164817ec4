"""The memories about one member, found by their user id (`ix_memories_subject_person`):
carrying reads a person's own words in each group they spoke in on every wake about
them (memory_core/storage/people/carry_repo.py), where the chat's index alone would
walk every memory of those groups. Partial: most memories are about no member.

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-07 12:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0032"
down_revision: str | None = "0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    about = sa.text("subject_person IS NOT NULL")
    op.create_index(
        "ix_memories_subject_person",
        "memories",
        ["subject_person", "scope"],
        sqlite_where=about,
        postgresql_where=about,
    )


def downgrade() -> None:
    op.drop_index("ix_memories_subject_person", table_name="memories")
