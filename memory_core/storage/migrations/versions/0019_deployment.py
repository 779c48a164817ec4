"""Several bot processes on one store: who leads, which accounts are ours, which
account heard each message, and who answers a nickname wake.

- `experiences.account`: the QQ account that heard (or sent) a live message; NULL for
  imports and for rows archived before this revision. The archive writer uses it to
  store a message two of the deployment's accounts heard once.
- `bot_accounts`: every account a bot process of this store connected, with the
  process that last saw it.
- `wake_claims`: the first process to claim a nickname wake answers it.
- `leadership`: the process that last took the leader's lock, so the next one can
  say it took over from a process that died.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A plain ADD COLUMN on both engines (no table rebuild under the archive's triggers).
    op.add_column("experiences", sa.Column("account", sa.String(64), nullable=True))
    op.create_table(
        "bot_accounts",
        sa.Column("account", sa.String(64), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("account", name=op.f("pk_bot_accounts")),
    )
    op.create_table(
        "wake_claims",
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("account", sa.String(64), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_wake_claims")),
    )
    op.create_index("ix_wake_claims_claimed_at", "wake_claims", ["claimed_at"])
    op.create_table(
        "leadership",
        sa.Column("role", sa.String(32), nullable=False),
        sa.Column("holder", sa.Text(), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("role", name=op.f("pk_leadership")),
    )


def downgrade() -> None:
    op.drop_table("leadership")
    op.drop_index("ix_wake_claims_claimed_at", table_name="wake_claims")
    op.drop_table("wake_claims")
    op.drop_table("bot_accounts")
    # Not a batch rebuild: other tables' foreign keys point at the archive.
    op.execute("ALTER TABLE experiences DROP COLUMN account")
