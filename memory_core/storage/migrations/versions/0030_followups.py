"""Follow-ups (#44): what was done about the follow-up of a dated plan (`followups`:
asked, answered, dropped, refused, and how often it was offered in a reply prompt), a
group's choice to be asked unprompted (`followup_chats`) and the members who asked not
to be asked (`followup_mutes`).

All three start empty: whether a follow-up is due is computed from the memories and
the clock (memory_core/followups/due.py), so this revision reads no memory.

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-07 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_STATES = "state IS NULL OR state IN ('asked', 'answered', 'dropped', 'refused')"


def upgrade() -> None:
    op.create_table(
        "followups",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("memory_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=True),
        sa.Column("offers", sa.Integer(), server_default="0", nullable=False),
        sa.Column("offered_day", sa.String(length=10), nullable=True),
        sa.Column("asked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sent_text", sa.Text(), nullable=True),
        sa.Column("reason", sa.Text(), server_default="", nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(_STATES, name=op.f("ck_followups_state")),
        sa.ForeignKeyConstraint(
            ["memory_id"], ["memories.id"], name=op.f("fk_followups_memory_id_memories")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_followups")),
        sa.UniqueConstraint("memory_id", name=op.f("uq_followups_memory_id")),
    )
    op.create_index(op.f("ix_followups_scope"), "followups", ["scope"], unique=False)
    op.create_table(
        "followup_chats",
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("changed_by", sa.String(length=64), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scope", name=op.f("pk_followup_chats")),
    )
    op.create_table(
        "followup_mutes",
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scope", "user_id", name=op.f("pk_followup_mutes")),
    )


def downgrade() -> None:
    op.drop_table("followup_mutes")
    op.drop_table("followup_chats")
    op.drop_index(op.f("ix_followups_scope"), table_name="followups")
    op.drop_table("followups")
