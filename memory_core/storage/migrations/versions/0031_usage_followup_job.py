"""Model usage may be counted under `followup`: the chat model writing an unprompted
follow-up (#44) is a job of its own in the token accounting, like recall's judge.
SQLite cannot alter a CHECK in place: the table is copied by Alembic's batch mode.

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-07 12:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0031"
down_revision: str | None = "0030"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = "job IN ('chat', 'consolidation', 'nightly', 'vision', 'judge', 'embed', 'rerank')"
_AFTER = (
    "job IN ('chat', 'consolidation', 'nightly', 'vision', 'judge', 'embed', 'rerank', 'followup')"
)


def _check(condition: str) -> None:
    with op.batch_alter_table("llm_usage", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_llm_usage_job"), type_="check")
        batch_op.create_check_constraint("job", condition)


def upgrade() -> None:
    _check(_AFTER)


def downgrade() -> None:
    op.execute("DELETE FROM llm_usage WHERE job = 'followup'")
    _check(_BEFORE)
