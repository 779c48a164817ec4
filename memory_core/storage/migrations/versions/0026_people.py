"""The person index: every platform user the archive heard (`persons`), the names each
went by in each chat over time (`person_names`), and how far `yuji people rebuild` got
(`people_progress`).

Derived data, created empty: the archive writer fills it as messages arrive, and
`yuji people rebuild` walks an existing archive into it in resumable batches. This
revision reads no message (a store of 10^7 rows starts as fast as an empty one).

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-07 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "persons",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("is_bot", sa.Boolean(), server_default="0", nullable=False),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_persons")),
        sa.UniqueConstraint("platform", "user_id", name=op.f("uq_persons_platform_user_id")),
    )
    op.create_table(
        "person_names",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("person_id", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("normalised", sa.Text(), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "source IN ('card', 'nickname', 'alias', 'mention')",
            name=op.f("ck_person_names_source"),
        ),
        sa.ForeignKeyConstraint(
            ["person_id"], ["persons.id"], name=op.f("fk_person_names_person_id_persons")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_person_names")),
        sa.UniqueConstraint(
            "person_id",
            "scope",
            "normalised",
            "source",
            name=op.f("uq_person_names_person_id_scope_normalised_source"),
        ),
    )
    op.create_index("ix_person_names_scope_normalised", "person_names", ["scope", "normalised"])
    op.create_table(
        "people_progress",
        sa.Column("job", sa.String(length=32), nullable=False),
        sa.Column("last_id", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("job", name=op.f("pk_people_progress")),
    )


def downgrade() -> None:
    op.drop_table("people_progress")
    op.drop_index("ix_person_names_scope_normalised", table_name="person_names")
    op.drop_table("person_names")
    op.drop_table("persons")
