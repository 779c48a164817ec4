"""Carrying a person's own words to their other chats (#45): each person's choices
(`carry_choices`: into their private chat, into their other groups), each chat's refusal
(`carry_blocks`, a group admin's `/carry block`) and who was seen leaving a chat
(`chat_departures`: a member who left is no longer carried to).

All three start empty: no row means the defaults (private on, groups off, no block,
nobody left), so this revision reads no row of the archive or the memories.

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-07 11:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "carry_choices",
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("into_private", sa.Boolean(), nullable=False),
        sa.Column("into_groups", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("platform", "user_id", name=op.f("pk_carry_choices")),
    )
    op.create_table(
        "carry_blocks",
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("blocked_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scope", name=op.f("pk_carry_blocks")),
    )
    op.create_table(
        "chat_departures",
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("left_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scope", "user_id", name=op.f("pk_chat_departures")),
    )


def downgrade() -> None:
    op.drop_table("chat_departures")
    op.drop_table("carry_blocks")
    op.drop_table("carry_choices")
