"""A card per member of a group (`person_cards`), written by a new nightly step,
`people`, after the chat's seven cards.

The card is versioned like the chat cards: each change inserts the next version of
(chat, member), so a member in two groups has two cards that never meet. The CHECK on
`nightly_runs.step` learns the new step; SQLite cannot alter a CHECK in place, so
`nightly_runs` is copied by Alembic's batch mode (a small table: one row per chat,
day and step).

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-08 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = "step IN ('settle', 'diary', 'cards', 'states', 'events', 'gc')"
_AFTER = "step IN ('settle', 'diary', 'cards', 'people', 'states', 'events', 'gc')"


def _check(condition: str) -> None:
    with op.batch_alter_table("nightly_runs", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_nightly_runs_step"), type_="check")
        batch_op.create_check_constraint("step", condition)


def upgrade() -> None:
    op.create_table(
        "person_cards",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("day", sa.String(length=10), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_person_cards")),
        sa.UniqueConstraint(
            "scope", "user_id", "version", name=op.f("uq_person_cards_scope_user_id_version")
        ),
    )
    _check(_AFTER)


def downgrade() -> None:
    op.execute("DELETE FROM nightly_runs WHERE step = 'people'")
    _check(_BEFORE)
    op.drop_table("person_cards")
