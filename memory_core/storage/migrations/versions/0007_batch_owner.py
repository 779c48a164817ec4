"""A batch names the process that runs it (`host/boot/pid/start`).

A `yuji consolidate` killed mid-batch left its batch open with nothing saying whose
it was, so later runs waited for the watchdog. With the owner recorded, a batch
whose process is gone is failed at once (memory_core/consolidation/owner.py).
Batches from before have no owner and wait for the watchdog as before.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 23:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("consolidation_batches") as batch:
        batch.add_column(sa.Column("owner", sa.String(200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("consolidation_batches") as batch:
        batch.drop_column("owner")
