"""Model usage may be counted under the recall models' own jobs, `embed` and `rerank`.

Embeddings over an API (`YUJI_EMBED_*`) and a reranker (`YUJI_RERANK_*`, an API or a
local cross-encoder) write one `llm_usage` row per call, like the chat models, so
their tokens, latency and failures show in `/status`, `yuji status` and the console.
SQLite cannot alter a CHECK in place: the table is copied by Alembic's batch mode.

Revision ID: 0023
Revises: 0021
Create Date: 2026-12-06 01:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0023"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = "job IN ('chat', 'consolidation', 'nightly', 'vision', 'judge')"
_AFTER = "job IN ('chat', 'consolidation', 'nightly', 'vision', 'judge', 'embed', 'rerank')"


def _check(condition: str) -> None:
    with op.batch_alter_table("llm_usage", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_llm_usage_job"), type_="check")
        batch_op.create_check_constraint("job", condition)


def upgrade() -> None:
    _check(_AFTER)


def downgrade() -> None:
    op.execute("DELETE FROM llm_usage WHERE job IN ('embed', 'rerank')")
    _check(_BEFORE)
