"""Whom each memory is about and whose word it is: `subject_kind` (a member, the chat,
the bot, a thing, or a member-like name that matches no one), `subject_person` (the
member's user id) and `word` (self / self-only / hearsay), on memories and on every
version of them, so a re-resolution is a version like any other change.

Added empty (NULL: not resolved yet), without reading a row: a store of 10^6 memories
starts as fast as an empty one; `yuji people rebuild` resolves the existing ones.
SQLite adds each column with its CHECK in place (ALTER TABLE ADD COLUMN allows one):
a batch copy of `memories` would rewrite the table the full-text index is keyed on.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-07 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TABLES = ("memories", "memory_versions")
_KINDS = "subject_kind IN ('person', 'group', 'bot', 'thing', 'unresolved')"
_WORDS = "word IN ('self', 'self-only', 'hearsay')"


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    for table in _TABLES:
        if sqlite:
            op.execute(
                f"ALTER TABLE {table} ADD COLUMN subject_kind VARCHAR(16)"
                f" CONSTRAINT ck_{table}_subject_kind CHECK ({_KINDS})"
            )
            op.execute(f"ALTER TABLE {table} ADD COLUMN subject_person VARCHAR(64)")
            op.execute(
                f"ALTER TABLE {table} ADD COLUMN word VARCHAR(16)"
                f" CONSTRAINT ck_{table}_word CHECK ({_WORDS})"
            )
            continue
        op.add_column(table, sa.Column("subject_kind", sa.String(length=16), nullable=True))
        op.add_column(table, sa.Column("subject_person", sa.String(length=64), nullable=True))
        op.add_column(table, sa.Column("word", sa.String(length=16), nullable=True))
        op.create_check_constraint(op.f(f"ck_{table}_subject_kind"), table, _KINDS)
        op.create_check_constraint(op.f(f"ck_{table}_word"), table, _WORDS)


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    for table in _TABLES:
        if sqlite:  # SQLite 3.35+ drops a column whose CHECK names only itself
            for column in ("word", "subject_person", "subject_kind"):
                op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
            continue
        op.drop_constraint(op.f(f"ck_{table}_word"), table, type_="check")
        op.drop_constraint(op.f(f"ck_{table}_subject_kind"), table, type_="check")
        for column in ("word", "subject_person", "subject_kind"):
            op.drop_column(table, column)
