"""One row per model call: job, model, chat, tokens (cached too), latency, outcome.

Revision ID: 0004
Revises: 0002
Create Date: 2026-12-01 22:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JOBS = "job IN ('chat', 'consolidation', 'nightly', 'vision')"
_OUTCOMES = (
    "outcome IN ('ok', 'timeout', 'rate_limited', 'unavailable', 'no_tools', "
    "'bad_response', 'cancelled', 'error')"
)


def upgrade() -> None:
    op.create_table(
        "llm_usage",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("job", sa.String(16), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("scope", sa.String(64)),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("completion_tokens", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("cached_tokens", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.CheckConstraint(_JOBS, name=op.f("ck_llm_usage_job")),
        sa.CheckConstraint(_OUTCOMES, name=op.f("ck_llm_usage_outcome")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_llm_usage")),
    )
    op.create_index(op.f("ix_llm_usage_at"), "llm_usage", ["at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_llm_usage_at"), table_name="llm_usage")
    op.drop_table("llm_usage")
