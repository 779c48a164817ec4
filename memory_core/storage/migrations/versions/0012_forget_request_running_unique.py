"""One running forget request per person and chat: a partial UNIQUE index.

Opening a request looked for the person's running request and then inserted or
widened it; it is now one upsert (INSERT ... ON CONFLICT DO UPDATE) against this
index. Running requests already there twice keep the first (the lowest id) running;
the others are closed as done (every name stays in its row, and the next request of
the person folds all of them in). A downgrade drops the index and keeps the rows.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02 04:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = "uq_forget_requests_running"


def upgrade() -> None:
    op.execute(
        "UPDATE forget_requests SET state = 'done', finished_at = created_at "
        "WHERE state = 'running' AND id NOT IN "
        "(SELECT min(id) FROM forget_requests WHERE state = 'running' GROUP BY scope, user_id)"
    )
    op.create_index(
        NAME,
        "forget_requests",
        ["scope", "user_id"],
        unique=True,
        sqlite_where=sa.text("state = 'running'"),
        postgresql_where=sa.text("state = 'running'"),
    )


def downgrade() -> None:
    op.drop_index(NAME, table_name="forget_requests")
