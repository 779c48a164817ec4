"""Messages of a chat by the time they were sent.

The console's archive shows one day of a chat at a time; without this index that
read walked every message of the chat (100k messages: ~150 ms under load).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02 02:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain CREATE INDEX: a batch (copy-and-move) on experiences would drop its
    # append-only triggers.
    op.create_index("ix_experiences_scope_sent_at", "experiences", ["scope", "sent_at"])


def downgrade() -> None:
    op.drop_index("ix_experiences_scope_sent_at", table_name="experiences")
