"""Initial schema: every table of docs/design.md#storage, and the append-only triggers.

Revision ID: 0001
Revises:
Create Date: 2026-11-29 16:27:39.915430
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The archive and the memory history are append-only at the database level too:
# even a hand-written UPDATE from a SQL shell is refused.
APPEND_ONLY = (
    "experiences",
    "experience_attachments",
    "memory_versions",
    "memory_evidence",
    # Nightly: every card version and every diary is kept as written.
    "cards",
    "diaries",
)


def _create_append_only_triggers() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return  # PostgreSQL's guards are functions (migration 0016)
    for table in APPEND_ONLY:
        for action in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER {table}_no_{action.lower()} BEFORE {action} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
            )


# The full-text index of memories is derived and rebuildable (`yuji reindex`); its
# layout (scope-keyed CJK bigram / unigram tokens) is memory_core/storage/fulltext/fts.py.
MEMORY_FTS = (
    "CREATE VIRTUAL TABLE memory_fts USING fts5("
    "bi, uni, tokenize = 'unicode61 remove_diacritics 0')",
    "CREATE VIRTUAL TABLE memory_fts_vocab USING fts5vocab(memory_fts, 'row')",
)


def _create_memory_fts() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for statement in MEMORY_FTS:
            op.execute(statement)


def _drop_memory_fts() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute("DROP TABLE IF EXISTS memory_fts_vocab")
    op.execute("DROP TABLE IF EXISTS memory_fts")


def _drop_append_only_triggers() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for table in APPEND_ONLY:
        for action in ("update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS {table}_no_{action}")


def upgrade() -> None:
    op.create_table(
        "aliases",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("alias", sa.Text(), nullable=False),
        sa.Column("canonical", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_aliases")),
        sa.UniqueConstraint("scope", "alias", name=op.f("uq_aliases_scope_alias")),
    )
    op.create_table(
        "attachments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=True),
        sa.Column("mime", sa.String(length=128), nullable=True),
        sa.Column("size", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("cleaned_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status = 'failed' OR sha256 IS NOT NULL",
            name=op.f("ck_attachments_hash_known"),
        ),
        sa.CheckConstraint(
            "status IN ('stored', 'cleaned', 'failed')",
            name=op.f("ck_attachments_status"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_attachments")),
        sa.UniqueConstraint("sha256", name=op.f("uq_attachments_sha256")),
    )
    op.create_table(
        "cards",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("day", sa.String(length=10), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "kind IN ('preferences', 'interaction_patterns', 'recent_status', 'goals', 'relationships', 'key_events', 'interaction_rules')",
            name=op.f("ck_cards_kind"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cards")),
        sa.UniqueConstraint(
            "scope", "kind", "version", name=op.f("uq_cards_scope_kind_version")
        ),
    )
    op.create_table(
        "chat_state",
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("muted_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_wake_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_reply_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("settings", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scope", name=op.f("pk_chat_state")),
    )
    op.create_table(
        "consolidation_batches",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("first_id", sa.Integer(), nullable=False),
        sa.Column("last_id", sa.Integer(), nullable=False),
        sa.Column("message_count", sa.Integer(), nullable=False),
        sa.Column("chars", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=True),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("progressed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "outcome IS NULL OR outcome IN ('extracted', 'nothing')",
            name=op.f("ck_consolidation_batches_outcome"),
        ),
        sa.CheckConstraint(
            "state IN ('queued', 'delivered', 'processing', 'done', 'failed')",
            name=op.f("ck_consolidation_batches_state"),
        ),
        sa.CheckConstraint(
            "first_id <= last_id", name=op.f("ck_consolidation_batches_range")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_consolidation_batches")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("consolidation_batches", schema=None) as batch_op:
        batch_op.create_index(
            "ix_consolidation_batches_scope_state", ["scope", "state"], unique=False
        )

    op.create_table(
        "consolidation_cursors",
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("delivered_id", sa.Integer(), server_default="0", nullable=False),
        sa.Column("acked_id", sa.Integer(), server_default="0", nullable=False),
        sa.Column(
            "consecutive_failures", sa.Integer(), server_default="0", nullable=False
        ),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scope", name=op.f("pk_consolidation_cursors")),
    )
    op.create_table(
        "diaries",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("fragment_ids", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_diaries")),
        sa.UniqueConstraint("scope", "day", name=op.f("uq_diaries_scope_day")),
    )
    op.create_table(
        "experiences",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("fingerprint", sa.String(length=128), nullable=False),
        sa.Column("sender_id", sa.String(length=64), nullable=False),
        sa.Column("sender_name", sa.Text(), server_default="", nullable=False),
        sa.Column("is_bot", sa.Boolean(), server_default="0", nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("segments", sa.Text(), nullable=False),
        sa.Column("reply_to", sa.String(length=128), nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.CheckConstraint(
            "source IN ('realtime', 'backfill', 'migrated')",
            name=op.f("ck_experiences_source"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_experiences")),
        sa.UniqueConstraint(
            "scope", "fingerprint", name=op.f("uq_experiences_scope_fingerprint")
        ),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("experiences", schema=None) as batch_op:
        batch_op.create_index("ix_experiences_scope_id", ["scope", "id"], unique=False)

    op.create_table(
        "memories",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("importance", sa.Float(), server_default="0.5", nullable=False),
        sa.Column("confidence", sa.Float(), server_default="0.8", nullable=False),
        sa.Column(
            "status", sa.String(length=16), server_default="active", nullable=False
        ),
        sa.Column("valid_from", sa.DateTime(timezone=True), nullable=True),
        sa.Column("valid_to", sa.DateTime(timezone=True), nullable=True),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.Column(
            "origin", sa.String(length=32), server_default="model", nullable=False
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_accessed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("hit_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("pinned", sa.Boolean(), server_default="0", nullable=False),
        sa.Column("starred", sa.Boolean(), server_default="0", nullable=False),
        sa.CheckConstraint(
            "status IN ('active', 'retracted', 'cold')", name=op.f("ck_memories_status")
        ),
        sa.CheckConstraint(
            "type IN ('fact', 'preference', 'event', 'relation', 'state', 'rule')",
            name=op.f("ck_memories_type"),
        ),
        sa.CheckConstraint(
            "confidence >= 0 AND confidence <= 1", name=op.f("ck_memories_confidence")
        ),
        sa.CheckConstraint(
            "importance >= 0 AND importance <= 1", name=op.f("ck_memories_importance")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memories")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("memories", schema=None) as batch_op:
        batch_op.create_index(
            "ix_memories_scope_status", ["scope", "status"], unique=False
        )
        batch_op.create_index(
            "ix_memories_scope_type_id", ["scope", "type", "id"], unique=False
        )

    op.create_table(
        "nightly_runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("step", sa.String(length=16), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "state IN ('pending', 'running', 'done', 'failed')",
            name=op.f("ck_nightly_runs_state"),
        ),
        sa.CheckConstraint(
            "step IN ('settle', 'diary', 'cards', 'states', 'events', 'gc')",
            name=op.f("ck_nightly_runs_step"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nightly_runs")),
        sa.UniqueConstraint(
            "scope", "day", "step", name=op.f("uq_nightly_runs_scope_day_step")
        ),
    )
    op.create_table(
        "nightly_scopes",
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column(
            "consecutive_failures", sa.Integer(), server_default="0", nullable=False
        ),
        sa.Column("circuit_open", sa.Boolean(), server_default="0", nullable=False),
        sa.Column("retry_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("last_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_success_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scope", name=op.f("pk_nightly_scopes")),
    )
    op.create_table(
        "nightly_settled",
        sa.Column("memory_id", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("settled_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["memories.id"],
            name=op.f("fk_nightly_settled_memory_id_memories"),
        ),
        sa.PrimaryKeyConstraint("memory_id", name=op.f("pk_nightly_settled")),
    )
    op.create_table(
        "timeline",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_timeline")),
    )
    with op.batch_alter_table("timeline", schema=None) as batch_op:
        batch_op.create_index("ix_timeline_scope_day", ["scope", "day"], unique=False)

    op.create_table(
        "experience_attachments",
        sa.Column("experience_id", sa.Integer(), nullable=False),
        sa.Column("attachment_id", sa.Integer(), nullable=False),
        sa.Column("segment_index", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["attachment_id"],
            ["attachments.id"],
            name=op.f("fk_experience_attachments_attachment_id_attachments"),
        ),
        sa.ForeignKeyConstraint(
            ["experience_id"],
            ["experiences.id"],
            name=op.f("fk_experience_attachments_experience_id_experiences"),
        ),
        sa.PrimaryKeyConstraint(
            "experience_id",
            "attachment_id",
            "segment_index",
            name=op.f("pk_experience_attachments"),
        ),
    )
    with op.batch_alter_table("experience_attachments", schema=None) as batch_op:
        batch_op.create_index(
            "ix_experience_attachments_attachment", ["attachment_id"], unique=False
        )

    op.create_table(
        "fragments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("first_id", sa.Integer(), nullable=False),
        sa.Column("last_id", sa.Integer(), nullable=False),
        sa.Column("first_sent_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_sent_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("archived", sa.Boolean(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(
            ["batch_id"],
            ["consolidation_batches.id"],
            name=op.f("fk_fragments_batch_id_consolidation_batches"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fragments")),
    )
    with op.batch_alter_table("fragments", schema=None) as batch_op:
        batch_op.create_index(
            "ix_fragments_scope_archived", ["scope", "archived"], unique=False
        )

    op.create_table(
        "injections",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("trigger_experience_id", sa.Integer(), nullable=True),
        sa.Column("reply_fingerprint", sa.String(length=128), nullable=True),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("items", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["trigger_experience_id"],
            ["experiences.id"],
            name=op.f("fk_injections_trigger_experience_id_experiences"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_injections")),
    )
    with op.batch_alter_table("injections", schema=None) as batch_op:
        batch_op.create_index("ix_injections_scope_id", ["scope", "id"], unique=False)

    op.create_table(
        "memory_relations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("src_id", sa.Integer(), nullable=False),
        sa.Column("dst_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), server_default="", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "kind IN ('supports', 'related', 'contradicts', 'supersedes', 'merged')",
            name=op.f("ck_memory_relations_kind"),
        ),
        sa.CheckConstraint(
            "src_id != dst_id", name=op.f("ck_memory_relations_no_self")
        ),
        sa.ForeignKeyConstraint(
            ["dst_id"],
            ["memories.id"],
            name=op.f("fk_memory_relations_dst_id_memories"),
        ),
        sa.ForeignKeyConstraint(
            ["src_id"],
            ["memories.id"],
            name=op.f("fk_memory_relations_src_id_memories"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memory_relations")),
        sa.UniqueConstraint(
            "src_id",
            "dst_id",
            "kind",
            name=op.f("uq_memory_relations_src_id_dst_id_kind"),
        ),
    )
    with op.batch_alter_table("memory_relations", schema=None) as batch_op:
        batch_op.create_index("ix_memory_relations_dst", ["dst_id"], unique=False)

    op.create_table(
        "memory_versions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("memory_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("importance", sa.Float(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("valid_from", sa.DateTime(timezone=True), nullable=True),
        sa.Column("valid_to", sa.DateTime(timezone=True), nullable=True),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("changed_by", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.Text(), server_default="", nullable=False),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["memories.id"],
            name=op.f("fk_memory_versions_memory_id_memories"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memory_versions")),
        sa.UniqueConstraint(
            "memory_id", "version", name=op.f("uq_memory_versions_memory_id_version")
        ),
    )
    op.create_table(
        "memory_evidence",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("memory_id", sa.Integer(), nullable=False),
        sa.Column("experience_id", sa.Integer(), nullable=True),
        sa.Column("source_memory_id", sa.Integer(), nullable=True),
        sa.Column("fragment_id", sa.Integer(), nullable=True),
        sa.Column(
            "role", sa.String(length=16), server_default="primary", nullable=False
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            # Databases made before PostgreSQL was supported hold the same rule as a
            # boolean sum, which only SQLite accepts.
            "(CASE WHEN experience_id IS NULL THEN 0 ELSE 1 END)"
            " + (CASE WHEN source_memory_id IS NULL THEN 0 ELSE 1 END)"
            " + (CASE WHEN fragment_id IS NULL THEN 0 ELSE 1 END) = 1",
            name=op.f("ck_memory_evidence_one_target"),
        ),
        sa.ForeignKeyConstraint(
            ["experience_id"],
            ["experiences.id"],
            name=op.f("fk_memory_evidence_experience_id_experiences"),
        ),
        sa.ForeignKeyConstraint(
            ["fragment_id"],
            ["fragments.id"],
            name=op.f("fk_memory_evidence_fragment_id_fragments"),
        ),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["memories.id"],
            name=op.f("fk_memory_evidence_memory_id_memories"),
        ),
        sa.ForeignKeyConstraint(
            ["source_memory_id"],
            ["memories.id"],
            name=op.f("fk_memory_evidence_source_memory_id_memories"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memory_evidence")),
    )
    with op.batch_alter_table("memory_evidence", schema=None) as batch_op:
        batch_op.create_index(
            "ix_memory_evidence_experience", ["experience_id"], unique=False
        )
        batch_op.create_index("ix_memory_evidence_memory", ["memory_id"], unique=False)
    _create_append_only_triggers()
    _create_memory_fts()


def downgrade() -> None:
    _drop_memory_fts()
    _drop_append_only_triggers()
    with op.batch_alter_table("memory_evidence", schema=None) as batch_op:
        batch_op.drop_index("ix_memory_evidence_memory")
        batch_op.drop_index("ix_memory_evidence_experience")

    op.drop_table("memory_evidence")
    op.drop_table("memory_versions")
    with op.batch_alter_table("memory_relations", schema=None) as batch_op:
        batch_op.drop_index("ix_memory_relations_dst")

    op.drop_table("memory_relations")
    with op.batch_alter_table("injections", schema=None) as batch_op:
        batch_op.drop_index("ix_injections_scope_id")

    op.drop_table("injections")
    with op.batch_alter_table("fragments", schema=None) as batch_op:
        batch_op.drop_index("ix_fragments_scope_archived")

    op.drop_table("fragments")
    with op.batch_alter_table("experience_attachments", schema=None) as batch_op:
        batch_op.drop_index("ix_experience_attachments_attachment")

    op.drop_table("experience_attachments")
    with op.batch_alter_table("timeline", schema=None) as batch_op:
        batch_op.drop_index("ix_timeline_scope_day")

    op.drop_table("timeline")
    op.drop_table("nightly_settled")
    op.drop_table("nightly_scopes")
    op.drop_table("nightly_runs")
    with op.batch_alter_table("memories", schema=None) as batch_op:
        batch_op.drop_index("ix_memories_scope_type_id")
        batch_op.drop_index("ix_memories_scope_status")

    op.drop_table("memories")
    with op.batch_alter_table("experiences", schema=None) as batch_op:
        batch_op.drop_index("ix_experiences_scope_id")

    op.drop_table("experiences")
    op.drop_table("diaries")
    op.drop_table("consolidation_cursors")
    with op.batch_alter_table("consolidation_batches", schema=None) as batch_op:
        batch_op.drop_index("ix_consolidation_batches_scope_state")

    op.drop_table("consolidation_batches")
    op.drop_table("chat_state")
    op.drop_table("cards")
    op.drop_table("attachments")
    op.drop_table("aliases")
