"""The nightly run gains a step, `followups` (after `events`): it may drop the day's new
follow-ups not worth asking about (#44). The CHECK on `nightly_runs.step` learns it;
SQLite cannot alter a CHECK in place, so `nightly_runs` is copied by Alembic's batch
mode (a small table: one row per chat, day and step).

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-07 13:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0033"
down_revision: str | None = "0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = "step IN ('settle', 'diary', 'cards', 'people', 'states', 'events', 'gc')"
_AFTER = "step IN ('settle', 'diary', 'cards', 'people', 'states', 'events', 'followups', 'gc')"


def _check(condition: str) -> None:
    with op.batch_alter_table("nightly_runs", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_nightly_runs_step"), type_="check")
        batch_op.create_check_constraint("step", condition)


def upgrade() -> None:
    _check(_AFTER)


def downgrade() -> None:
    op.execute("DELETE FROM nightly_runs WHERE step = 'followups'")
    _check(_BEFORE)
