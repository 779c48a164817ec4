"""What the vision model saw in each image, once per content hash.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 23:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "image_descriptions",
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("model", sa.String(200), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'done', 'failed')", name=op.f("ck_image_descriptions_status")
        ),
        sa.PrimaryKeyConstraint("sha256", name=op.f("pk_image_descriptions")),
    )
    op.create_index(
        op.f("ix_image_descriptions_status"), "image_descriptions", ["status", "queued_at"]
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_image_descriptions_status"), table_name="image_descriptions")
    op.drop_table("image_descriptions")
