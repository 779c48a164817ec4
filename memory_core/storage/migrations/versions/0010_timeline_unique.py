"""A timeline entry is kept once per chat, day and text: UNIQUE (scope, day, content).

Restoring a memory pack looked for the same entry before inserting it, and the
nightly cards step inserted without looking; both now insert with ON CONFLICT DO
NOTHING against this constraint. Entries already written twice keep their first
row (the lowest id) on upgrade; a downgrade drops the constraint and keeps the rows.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 02:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = "uq_timeline_scope_day_content"


def upgrade() -> None:
    op.execute(
        "DELETE FROM timeline WHERE id NOT IN "
        "(SELECT min(id) FROM timeline GROUP BY scope, day, content)"
    )
    with op.batch_alter_table("timeline") as batch:
        batch.create_unique_constraint(NAME, ["scope", "day", "content"])


def downgrade() -> None:
    with op.batch_alter_table("timeline") as batch:
        batch.drop_constraint(NAME, type_="unique")
