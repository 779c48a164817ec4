"""Model usage may be counted under the recall judge's own job, `judge`.

The judge (`YUJI_RECALL_JUDGE=llm`) runs on the consolidation model but is counted
apart; the CHECK on `llm_usage.job` named only the four configurable jobs, so every
judge call's usage row was refused (and logged as a failed write). SQLite cannot
alter a CHECK in place: the table is copied by Alembic's batch mode.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04 19:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = "job IN ('chat', 'consolidation', 'nightly', 'vision')"
_AFTER = "job IN ('chat', 'consolidation', 'nightly', 'vision', 'judge')"


def _check(condition: str) -> None:
    with op.batch_alter_table("llm_usage", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_llm_usage_job"), type_="check")
        batch_op.create_check_constraint("job", condition)


def upgrade() -> None:
    _check(_AFTER)


def downgrade() -> None:
    op.execute("DELETE FROM llm_usage WHERE job = 'judge'")
    _check(_BEFORE)
