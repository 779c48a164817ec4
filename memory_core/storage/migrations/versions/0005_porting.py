"""Porting: import bookkeeping, and the one audited exception to the append-only archive.

- `import_keys`: what an import already wrote, by its source's key (a typed fact's
  subject and key, a memory pack's memory id), so a rerun writes nothing twice.
- `import_checkpoints`: how far an import of one file into one chat got.
- `forget_requests` and `redactions`: a person's request to be forgotten, and each
  archived message whose text was replaced by the tombstone for it.

The experiences UPDATE trigger is replaced by one that still refuses every update,
except the tombstone write of a message listed in `redactions`: text becomes the
tombstone, segments an empty list, the sender's display name empty, and nothing
else changes. `redactions` itself is append-only.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 22:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TOMBSTONE = "[此消息已应本人要求删除]"
"""Kept equal to memory_core.storage.porting.redaction_repo.TOMBSTONE (a test checks)."""

_UNCHANGED = (
    "id",
    "scope",
    "fingerprint",
    "sender_id",
    "is_bot",
    "reply_to",
    "sent_at",
    "received_at",
    "source",
)


def _tombstone_trigger() -> str:
    same = " AND ".join(f"NEW.{c} IS OLD.{c}" for c in _UNCHANGED)
    return (
        "CREATE TRIGGER experiences_no_update BEFORE UPDATE ON experiences "
        f"WHEN NOT (NEW.text = '{TOMBSTONE}' AND NEW.segments = '[]' "
        f"AND NEW.sender_name = '' AND {same} "
        "AND EXISTS (SELECT 1 FROM redactions r WHERE r.experience_id = OLD.id)) "
        "BEGIN SELECT RAISE(ABORT, 'experiences is append-only'); END"
    )


def upgrade() -> None:
    op.create_table(
        "import_keys",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=64), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("memory_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["memory_id"], ["memories.id"], name=op.f("fk_import_keys_memory_id_memories")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_import_keys")),
        sa.UniqueConstraint("scope", "source", "key", name=op.f("uq_import_keys_scope_source_key")),
    )
    op.create_table(
        "import_checkpoints",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("source_key", sa.Text(), nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("position", sa.Integer(), server_default="0", nullable=False),
        sa.Column("counts", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_import_checkpoints")),
        sa.UniqueConstraint(
            "kind", "source_key", "scope", name=op.f("uq_import_checkpoints_kind_source_key_scope")
        ),
    )
    op.create_table(
        "forget_requests",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("requested_by", sa.String(length=64), nullable=False),
        sa.Column("names", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("report", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("cards_done_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "state IN ('running', 'done')", name=op.f("ck_forget_requests_state")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_forget_requests")),
    )
    with op.batch_alter_table("forget_requests", schema=None) as batch_op:
        batch_op.create_index(
            "ix_forget_requests_scope_user", ["scope", "user_id"], unique=False
        )
    op.create_table(
        "redactions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("request_id", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("experience_id", sa.Integer(), nullable=False),
        sa.Column("redacted_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["request_id"],
            ["forget_requests.id"],
            name=op.f("fk_redactions_request_id_forget_requests"),
        ),
        sa.ForeignKeyConstraint(
            ["experience_id"],
            ["experiences.id"],
            name=op.f("fk_redactions_experience_id_experiences"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_redactions")),
        sa.UniqueConstraint("experience_id", name=op.f("uq_redactions_experience_id")),
    )
    if op.get_bind().dialect.name != "sqlite":
        return
    for action in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER redactions_no_{action.lower()} BEFORE {action} ON redactions "
            "BEGIN SELECT RAISE(ABORT, 'redactions is append-only'); END"
        )
    op.execute("DROP TRIGGER IF EXISTS experiences_no_update")
    op.execute(_tombstone_trigger())


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS experiences_no_update")
        op.execute(
            "CREATE TRIGGER experiences_no_update BEFORE UPDATE ON experiences "
            "BEGIN SELECT RAISE(ABORT, 'experiences is append-only'); END"
        )
        op.execute("DROP TRIGGER IF EXISTS redactions_no_update")
        op.execute("DROP TRIGGER IF EXISTS redactions_no_delete")
    op.drop_table("redactions")
    with op.batch_alter_table("forget_requests", schema=None) as batch_op:
        batch_op.drop_index("ix_forget_requests_scope_user")
    op.drop_table("forget_requests")
    op.drop_table("import_checkpoints")
    op.drop_table("import_keys")
