"""Every table, as SQLAlchemy Core: the data model (docs/design.md#storage) and the
bookkeeping added to it since (model usage, imports, forget requests, the console, image
descriptions, alerts, the nightly run's health and settled states).

This module is the description the repositories query against; the Alembic
migrations create the same tables (a test compares the two). Truth tables:
experiences (+ attachments links) and memories (+ versions, evidence, relations,
aliases). Everything else is bookkeeping or derived.
"""

from __future__ import annotations

from typing import Any, get_args

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from memory_core.settings import LLMJob
from memory_core.types import (
    CardKind,
    MemoryStatus,
    MemoryType,
    NameSource,
    RelationKind,
    Source,
    SubjectKind,
    Word,
)

from .types import JSONText, UTCDateTime

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

SOURCES = get_args(Source)
ATTACHMENT_STATUSES = ("stored", "cleaned", "failed")
MEMORY_TYPES = get_args(MemoryType)
MEMORY_STATUSES = get_args(MemoryStatus)
SUBJECT_KINDS = get_args(SubjectKind)
WORDS = get_args(Word)
RELATION_KINDS = get_args(RelationKind)
BATCH_STATES = ("queued", "delivered", "processing", "done", "failed")
BATCH_OUTCOMES = ("extracted", "nothing")
CARD_KINDS = get_args(CardKind)
NIGHTLY_STEPS = ("settle", "diary", "cards", "people", "states", "events", "followups", "gc")
"""`states` is step 3.5: time-bound states the diary explicitly changes; `people`
(migration 0028) writes the cards of the members whose memories changed that day;
`followups` (migration 0033) may drop the day's new follow-ups not worth asking about."""
NIGHTLY_STATES = ("pending", "running", "done", "failed")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


# --- experience layer (append-only) ---------------------------------------------

experiences = Table(
    "experiences",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), nullable=False),
    Column("fingerprint", String(128), nullable=False),
    Column("sender_id", String(64), nullable=False),
    Column("sender_name", Text, nullable=False, server_default=""),
    Column("is_bot", Boolean, nullable=False, server_default="0"),
    Column("text", Text, nullable=False),
    Column("segments", JSONText, nullable=False),
    Column("reply_to", String(128)),
    Column("sent_at", UTCDateTime, nullable=False),
    Column("received_at", UTCDateTime, nullable=False),
    Column("source", String(16), nullable=False),
    Column("account", String(64)),
    UniqueConstraint("scope", "fingerprint"),
    CheckConstraint(_in("source", SOURCES), name="source"),
    sqlite_autoincrement=True,
)
Index("ix_experiences_scope_id", experiences.c.scope, experiences.c.id)
Index("ix_experiences_scope_sent_at", experiences.c.scope, experiences.c.sent_at)

attachments = Table(
    "attachments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("sha256", String(64), unique=True),
    Column("mime", String(128)),
    Column("size", Integer),
    Column("status", String(16), nullable=False),
    Column("url", Text),
    Column("error", Text),
    Column("first_seen", UTCDateTime, nullable=False),
    Column("cleaned_at", UTCDateTime),
    CheckConstraint(_in("status", ATTACHMENT_STATUSES), name="status"),
    # A stored or cleaned file is known by its content; only a failed fetch has none.
    CheckConstraint("status = 'failed' OR sha256 IS NOT NULL", name="hash_known"),
)

experience_attachments = Table(
    "experience_attachments",
    metadata,
    Column("experience_id", ForeignKey("experiences.id"), primary_key=True),
    Column("attachment_id", ForeignKey("attachments.id"), primary_key=True),
    Column("segment_index", Integer, primary_key=True),
)
Index("ix_experience_attachments_attachment", experience_attachments.c.attachment_id)

# --- memory layer ----------------------------------------------------------------


def subject_columns() -> tuple[Column[Any] | CheckConstraint, ...]:
    """Whom a memory is about and whose word it is (memories and every version of
    them alike; migration 0027): NULL until resolved."""
    return (
        Column("subject_kind", String(16)),
        Column("subject_person", String(64)),
        Column("word", String(16)),
        CheckConstraint(_in("subject_kind", SUBJECT_KINDS), name="subject_kind"),
        CheckConstraint(_in("word", WORDS), name="word"),
    )


memories = Table(
    "memories",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), nullable=False),
    Column("type", String(16), nullable=False),
    Column("subject", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("importance", Float, nullable=False, server_default="0.5"),
    Column("confidence", Float, nullable=False, server_default="0.8"),
    Column("status", String(16), nullable=False, server_default="active"),
    Column("valid_from", UTCDateTime),
    Column("valid_to", UTCDateTime),
    Column("version", Integer, nullable=False, server_default="1"),
    Column("origin", String(32), nullable=False, server_default="model"),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("last_accessed_at", UTCDateTime),
    Column("hit_count", Integer, nullable=False, server_default="0"),
    Column("pinned", Boolean, nullable=False, server_default="0"),
    Column("starred", Boolean, nullable=False, server_default="0"),
    *subject_columns(),
    CheckConstraint(_in("type", MEMORY_TYPES), name="type"),
    CheckConstraint(_in("status", MEMORY_STATUSES), name="status"),
    CheckConstraint("importance >= 0 AND importance <= 1", name="importance"),
    CheckConstraint("confidence >= 0 AND confidence <= 1", name="confidence"),
    sqlite_autoincrement=True,
)
Index("ix_memories_scope_status", memories.c.scope, memories.c.status)
Index("ix_memories_scope_type_id", memories.c.scope, memories.c.type, memories.c.id)
# A wake that names a day reads the memories dated on it (memory_dated.py).
Index("ix_memories_scope_valid_from", memories.c.scope, memories.c.valid_from)
# Only bounded validities: most memories hold until changed (valid_to NULL), and a
# partial index is the one both planners take for "ends after the day starts".
Index(
    "ix_memories_scope_bounded",
    memories.c.scope,
    memories.c.valid_to,
    sqlite_where=memories.c.valid_to.is_not(None),
    postgresql_where=memories.c.valid_to.is_not(None),
)
# A member's memories by their user id, whatever the chat (carrying, migration 0032).
Index(
    "ix_memories_subject_person",
    memories.c.subject_person,
    memories.c.scope,
    sqlite_where=memories.c.subject_person.is_not(None),
    postgresql_where=memories.c.subject_person.is_not(None),
)

memory_versions = Table(
    "memory_versions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("memory_id", ForeignKey("memories.id"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("type", String(16), nullable=False),
    Column("subject", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("importance", Float, nullable=False),
    Column("confidence", Float, nullable=False),
    Column("status", String(16), nullable=False),
    Column("valid_from", UTCDateTime),
    Column("valid_to", UTCDateTime),
    Column("changed_at", UTCDateTime, nullable=False),
    Column("changed_by", String(64), nullable=False),
    Column("reason", Text, nullable=False, server_default=""),
    *subject_columns(),
    UniqueConstraint("memory_id", "version"),
)

memory_evidence = Table(
    "memory_evidence",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("memory_id", ForeignKey("memories.id"), nullable=False),
    Column("experience_id", ForeignKey("experiences.id")),
    Column("source_memory_id", ForeignKey("memories.id")),
    Column("fragment_id", ForeignKey("fragments.id")),
    Column("role", String(16), nullable=False, server_default="primary"),
    Column("created_at", UTCDateTime, nullable=False),
    CheckConstraint(
        # CASE, not a boolean sum: PostgreSQL has no `boolean + boolean`.
        "(CASE WHEN experience_id IS NULL THEN 0 ELSE 1 END)"
        " + (CASE WHEN source_memory_id IS NULL THEN 0 ELSE 1 END)"
        " + (CASE WHEN fragment_id IS NULL THEN 0 ELSE 1 END) = 1",
        name="one_target",
    ),
)
Index("ix_memory_evidence_memory", memory_evidence.c.memory_id)
Index("ix_memory_evidence_experience", memory_evidence.c.experience_id)

memory_relations = Table(
    "memory_relations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), nullable=False),
    Column("src_id", ForeignKey("memories.id"), nullable=False),
    Column("dst_id", ForeignKey("memories.id"), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("reason", Text, nullable=False, server_default=""),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("src_id", "dst_id", "kind"),
    CheckConstraint(_in("kind", RELATION_KINDS), name="kind"),
    CheckConstraint("src_id != dst_id", name="no_self"),
)
Index("ix_memory_relations_dst", memory_relations.c.dst_id)

aliases = Table(
    "aliases",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), nullable=False),
    Column("alias", Text, nullable=False),
    Column("canonical", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("scope", "alias"),
)

# --- consolidation ---------------------------------------------------------------

consolidation_cursors = Table(
    "consolidation_cursors",
    metadata,
    Column("scope", String(64), primary_key=True),
    Column("delivered_id", Integer, nullable=False, server_default="0"),
    Column("acked_id", Integer, nullable=False, server_default="0"),
    Column("consecutive_failures", Integer, nullable=False, server_default="0"),
    Column("updated_at", UTCDateTime, nullable=False),
)

consolidation_batches = Table(
    "consolidation_batches",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), nullable=False),
    Column("first_id", Integer, nullable=False),
    Column("last_id", Integer, nullable=False),
    Column("message_count", Integer, nullable=False),
    Column("chars", Integer, nullable=False),
    Column("state", String(16), nullable=False),
    Column("outcome", String(16)),
    Column("token", String(64), nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("created_at", UTCDateTime, nullable=False),
    Column("delivered_at", UTCDateTime),
    Column("progressed_at", UTCDateTime),
    Column("finished_at", UTCDateTime),
    Column("error", Text),
    Column("owner", String(200)),
    # Set when the batch ends: the model's tool calls, and how many of them were refused.
    Column("tool_calls", Integer, nullable=False, server_default="0"),
    Column("refused", Integer, nullable=False, server_default="0"),
    CheckConstraint(_in("state", BATCH_STATES), name="state"),
    CheckConstraint(f"outcome IS NULL OR {_in('outcome', BATCH_OUTCOMES)}", name="outcome"),
    CheckConstraint("first_id <= last_id", name="range"),
    sqlite_autoincrement=True,
)
Index(
    "ix_consolidation_batches_scope_state",
    consolidation_batches.c.scope,
    consolidation_batches.c.state,
)

fragments = Table(
    "fragments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("batch_id", ForeignKey("consolidation_batches.id"), nullable=False),
    Column("scope", String(64), nullable=False),
    Column("summary", Text, nullable=False),
    Column("first_id", Integer, nullable=False),
    Column("last_id", Integer, nullable=False),
    Column("first_sent_at", UTCDateTime, nullable=False),
    Column("last_sent_at", UTCDateTime, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("archived", Boolean, nullable=False, server_default="0"),
)
Index("ix_fragments_scope_archived", fragments.c.scope, fragments.c.archived)

# --- nightly ----------------------------------------------------------------------

diaries = Table(
    "diaries",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), nullable=False),
    Column("day", String(10), nullable=False),
    Column("content", Text, nullable=False),
    Column("fragment_ids", JSONText, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("scope", "day"),
)

cards = Table(
    "cards",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("version", Integer, nullable=False),
    Column("content", Text, nullable=False),
    Column("day", String(10)),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("scope", "kind", "version"),
    CheckConstraint(_in("kind", CARD_KINDS), name="kind"),
)

timeline = Table(
    "timeline",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), nullable=False),
    Column("day", String(10), nullable=False),
    Column("content", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("scope", "day", "content"),
)
Index("ix_timeline_scope_day", timeline.c.scope, timeline.c.day)

nightly_runs = Table(
    "nightly_runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), nullable=False),
    Column("day", String(10), nullable=False),
    Column("step", String(16), nullable=False),
    Column("state", String(16), nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("error", Text),
    Column("started_at", UTCDateTime),
    Column("finished_at", UTCDateTime),
    # What the step produced or got through so far (its output, the model's reply).
    Column("detail", JSONText),
    UniqueConstraint("scope", "day", "step"),
    CheckConstraint(_in("step", NIGHTLY_STEPS), name="step"),
    CheckConstraint(_in("state", NIGHTLY_STATES), name="state"),
)

# Per scope: the retry schedule and circuit breaker of the nightly run.
nightly_scopes = Table(
    "nightly_scopes",
    metadata,
    Column("scope", String(64), primary_key=True),
    Column("consecutive_failures", Integer, nullable=False, server_default="0"),
    Column("circuit_open", Boolean, nullable=False, server_default="0"),
    Column("retry_at", UTCDateTime),
    Column("last_error", Text),
    Column("last_run_at", UTCDateTime),
    Column("last_success_at", UTCDateTime),
    Column("updated_at", UTCDateTime, nullable=False),
)

# `state` memories the nightly run already closed and rewrote into past tense.
nightly_settled = Table(
    "nightly_settled",
    metadata,
    Column("memory_id", ForeignKey("memories.id"), primary_key=True),
    Column("scope", String(64), nullable=False),
    Column("day", String(10), nullable=False),
    Column("settled_at", UTCDateTime, nullable=False),
)

# --- chat ---------------------------------------------------------------------------

chat_state = Table(
    "chat_state",
    metadata,
    Column("scope", String(64), primary_key=True),
    Column("muted_until", UTCDateTime),
    Column("last_wake_at", UTCDateTime),
    Column("last_reply_at", UTCDateTime),
    Column("settings", JSONText),
    Column("updated_at", UTCDateTime, nullable=False),
)

chat_names = Table(
    "chat_names",
    metadata,
    Column("scope", String(64), primary_key=True),
    # The group's name, or the person's nickname for a private chat, as the client
    # last said it: the console shows it beside the id.
    Column("name", Text, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

injections = Table(
    "injections",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), nullable=False),
    Column("trigger_experience_id", ForeignKey("experiences.id")),
    Column("reply_fingerprint", String(128)),
    Column("query", Text, nullable=False),
    Column("items", JSONText, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    # The prompt's blocks as [name, tokens, text] (the console's "this turn"); NULL before 0006.
    Column("blocks", JSONText),
)
Index("ix_injections_scope_id", injections.c.scope, injections.c.id)

# --- follow-ups: the persona asks how a dated plan went (migration 0030) ---------------

FOLLOWUP_STATES = ("asked", "answered", "dropped", "refused")

# What happened to the follow-up of one memory (memory_core/followups/). Whether it is
# due, upcoming or expired is computed from the memory and the clock, never stored: a
# row says only what was done about it (asked, in passing or unprompted; answered;
# dropped by an admin; refused because the model's date disagreed with the words it
# cites), with how often it was offered in a reply prompt and on which local day last.
followups = Table(
    "followups",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), nullable=False),
    Column("memory_id", ForeignKey("memories.id"), nullable=False, unique=True),
    Column("user_id", String(64), nullable=False),
    Column("state", String(16)),
    Column("offers", Integer, nullable=False, server_default="0"),
    Column("offered_day", String(10)),
    Column("asked_at", UTCDateTime),
    Column("sent_text", Text),
    Column("reason", Text, nullable=False, server_default=""),
    Column("updated_at", UTCDateTime, nullable=False),
    CheckConstraint(f"state IS NULL OR {_in('state', FOLLOWUP_STATES)}", name="state"),
)
Index("ix_followups_scope", followups.c.scope)

# A chat's follow-up choices: a group whose admin turned unprompted follow-ups on
# (`/followups on`); no row is the default (groups off, private chats per
# YUJI_FOLLOWUP_PRIVATE).
followup_chats = Table(
    "followup_chats",
    metadata,
    Column("scope", String(64), primary_key=True),
    Column("enabled", Boolean, nullable=False),
    Column("changed_by", String(64), nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# A member who asked not to be asked in a chat (`/followups mute-me`).
followup_mutes = Table(
    "followup_mutes",
    metadata,
    Column("scope", String(64), primary_key=True),
    Column("user_id", String(64), primary_key=True),
    Column("created_at", UTCDateTime, nullable=False),
)

# --- model usage ------------------------------------------------------------------

LLM_JOBS = (*get_args(LLMJob), "judge", "embed", "rerank", "followup")
"""Every job a model call is counted under: the configurable ones, recall's judge
(which runs on the consolidation model), the recall models from providers
(embeddings and the reranker, memory_core/providers/), and the unprompted follow-ups
(which run on the chat model, migration 0031)."""
LLM_OUTCOMES = (
    "ok",
    "timeout",
    "rate_limited",
    "unavailable",
    "no_tools",
    "bad_response",
    "cancelled",
    "error",
)

llm_usage = Table(
    "llm_usage",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", UTCDateTime, nullable=False),
    Column("job", String(16), nullable=False),
    Column("model", String(200), nullable=False),
    Column("scope", String(64)),
    Column("prompt_tokens", Integer, nullable=False, server_default="0"),
    Column("completion_tokens", Integer, nullable=False, server_default="0"),
    Column("cached_tokens", Integer, nullable=False, server_default="0"),
    Column("latency_ms", Integer, nullable=False),
    Column("outcome", String(16), nullable=False),
    CheckConstraint(_in("job", LLM_JOBS), name="job"),
    CheckConstraint(_in("outcome", LLM_OUTCOMES), name="outcome"),
)
Index("ix_llm_usage_at", llm_usage.c.at)

# --- porting: imports, and forgetting a person ----------------------------------

FORGET_STATES = ("running", "done")

# What an import already wrote, by the key of its source: a typed fact's
# (subject, key), a pack's memory id. A rerun finds its memory here instead of
# writing a second one.
import_keys = Table(
    "import_keys",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), nullable=False),
    Column("source", String(64), nullable=False),
    Column("key", Text, nullable=False),
    Column("memory_id", ForeignKey("memories.id"), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("scope", "source", "key"),
)

# How far an import of one file into one chat got (a resumed run starts there).
import_checkpoints = Table(
    "import_checkpoints",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(32), nullable=False),
    Column("source_key", Text, nullable=False),
    Column("scope", String(64), nullable=False),
    Column("position", Integer, nullable=False, server_default="0"),
    Column("counts", JSONText, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime),
    UniqueConstraint("kind", "source_key", "scope"),
)

# A person's request to be forgotten in one chat, and what was done for it.
forget_requests = Table(
    "forget_requests",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), nullable=False),
    Column("user_id", String(64), nullable=False),
    Column("requested_by", String(64), nullable=False),
    Column("names", JSONText, nullable=False),
    Column("state", String(16), nullable=False),
    Column("report", JSONText),
    Column("created_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime),
    Column("cards_done_at", UTCDateTime),
    CheckConstraint(_in("state", FORGET_STATES), name="state"),
)
Index("ix_forget_requests_scope_user", forget_requests.c.scope, forget_requests.c.user_id)
# At most one running request per person and chat (opening one is an upsert on it).
Index(
    "uq_forget_requests_running",
    forget_requests.c.scope,
    forget_requests.c.user_id,
    unique=True,
    sqlite_where=forget_requests.c.state == "running",
    postgresql_where=forget_requests.c.state == "running",
)

# The audit of the one exception to the append-only archive: an experience listed
# here may have its text replaced by the tombstone (the trigger checks this table),
# and nothing else may change it. Append-only itself.
redactions = Table(
    "redactions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("request_id", ForeignKey("forget_requests.id"), nullable=False),
    Column("scope", String(64), nullable=False),
    Column("experience_id", ForeignKey("experiences.id"), nullable=False, unique=True),
    Column("redacted_at", UTCDateTime, nullable=False),
)

# --- recent chat as a recall source (derived) ------------------------------------------

# The embedding of each unacknowledged message of a chat (computed in the bot process,
# memory_core/vectors/messages.py), dropped once the chat's acknowledged watermark
# passes it: from then on the memory, or the decision that nothing was worth
# remembering, answers for it. Derived, like the full-text index `message_fts`
# (storage/archive/message_search.py), which is made by migration 0015 only.
message_vectors = Table(
    "message_vectors",
    metadata,
    Column("experience_id", ForeignKey("experiences.id"), primary_key=True),
    Column("scope", String(64), nullable=False),
    Column("model", String(200), nullable=False),
    Column("vector", LargeBinary, nullable=False),
)
# The memory vector index, on PostgreSQL (SQLite keeps it in a file beside the
# database, vectors/store.py): one row per memory and model, the float32 vector as
# bytes, and per model the build that wrote them, so every process of a deployment
# reads one index and reloads it when `generation` moves.
memory_vectors = Table(
    "memory_vectors",
    metadata,
    Column("model", String(200), primary_key=True),
    Column("memory_id", Integer, primary_key=True),
    Column("version", Integer, nullable=False),
    Column("scope", String(64), nullable=False),
    Column("subject", Text, nullable=False),
    Column("text_sha", String(64), nullable=False),
    Column("vector", LargeBinary, nullable=False),
)

vector_builds = Table(
    "vector_builds",
    metadata,
    Column("model", String(200), primary_key=True),
    Column("generation", Integer, nullable=False),
    Column("fingerprint", Text, nullable=False),
    Column("dim", Integer, nullable=False),
    Column("built_at", UTCDateTime, nullable=False),
)

Index(
    "ix_message_vectors_scope_experience_id",
    message_vectors.c.scope,
    message_vectors.c.experience_id,
)

# --- console ------------------------------------------------------------------------

# Every change made through the web console: what, on which object, when, from where.
console_audit = Table(
    "console_audit",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", UTCDateTime, nullable=False),
    Column("address", String(64), nullable=False),
    Column("via", String(16), nullable=False),
    Column("action", String(32), nullable=False),
    Column("target", String(128), nullable=False),
    Column("detail", Text, nullable=False, server_default=""),
)
Index("ix_console_audit_at", console_audit.c.at)

# Tunables changed live in the console; they win over defaults, .env and environment.
console_overrides = Table(
    "console_overrides",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", JSONText, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# --- images ---------------------------------------------------------------------------

IMAGE_STATUSES = ("pending", "done", "failed")

image_descriptions = Table(
    "image_descriptions",
    metadata,
    Column("sha256", String(64), primary_key=True),
    Column("status", String(16), nullable=False),
    Column("description", Text),
    Column("model", String(200)),
    Column("error", Text),
    Column("queued_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime),
    CheckConstraint(_in("status", IMAGE_STATUSES), name="status"),
)
Index("ix_image_descriptions_status", image_descriptions.c.status, image_descriptions.c.queued_at)

# --- alerts -------------------------------------------------------------------------

# Every alert and recovery the alert gate sent (what the operator was told); the
# console's overview shows the last seven days. Pruned after thirty days.
alert_log = Table(
    "alert_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", UTCDateTime, nullable=False),
    Column("key", String(128), nullable=False),
    Column("text", Text, nullable=False),
    Column("recovered", Boolean, nullable=False, server_default="0"),
)
Index("ix_alert_log_at", alert_log.c.at)

# --- copying the store ----------------------------------------------------------------

# Kept by `yuji copy-store` in the store it copies *into*: per table, the last primary
# key copied and the rows so far, written in the same transaction as those rows, so a
# killed copy resumes where it stopped and the copy can tell its own rows from anyone
# else's. Bookkeeping of that target only: never copied itself.
copy_progress = Table(
    "copy_progress",
    metadata,
    Column("table_name", String(64), primary_key=True),
    Column("source", Text, nullable=False),
    Column("last_key", JSONText),
    Column("copied", Integer, nullable=False),
    Column("done", Boolean, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# --- several processes on one store (docs/design.md#several-processes) -----------------

# Every QQ account a bot process of this store connected: a message one of them sent
# is the bot's own whichever account heard it.
bot_accounts = Table(
    "bot_accounts",
    metadata,
    Column("account", String(64), primary_key=True),
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("last_seen", UTCDateTime, nullable=False),
)

# A nickname wake two accounts heard: the process whose insert lands answers it.
wake_claims = Table(
    "wake_claims",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("account", String(64), nullable=False),
    Column("claimed_at", UTCDateTime, nullable=False),
)
Index("ix_wake_claims_claimed_at", wake_claims.c.claimed_at)

# The process that last took the leader's lock (one row per role).
leadership = Table(
    "leadership",
    metadata,
    Column("role", String(32), primary_key=True),
    Column("holder", Text, nullable=False),
    Column("since", UTCDateTime, nullable=False),
)

# --- people: who is who (derived from the archive and the aliases) ---------------------

NAME_SOURCES = get_args(NameSource)

# Every platform user the archive heard (a sender, an @-mentioned id, the account that
# heard it), once per platform; the deployment's accounts are marked as the bot.
# Filled in the archive writer's transaction and by `yuji people rebuild`
# (memory_core/people/), never by a migration.
persons = Table(
    "persons",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("platform", String(16), nullable=False),
    Column("user_id", String(64), nullable=False),
    Column("is_bot", Boolean, nullable=False, server_default="0"),
    Column("first_seen", UTCDateTime, nullable=False),
    Column("last_seen", UTCDateTime, nullable=False),
    UniqueConstraint("platform", "user_id"),
)

# Each name a person went by in one chat, per source, with when it was first and last
# seen; a rename adds a row and leaves the old one at its last sighting.
person_names = Table(
    "person_names",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("person_id", ForeignKey("persons.id"), nullable=False),
    Column("scope", String(64), nullable=False),
    Column("name", Text, nullable=False),
    Column("normalised", Text, nullable=False),
    Column("source", String(16), nullable=False),
    Column("first_seen", UTCDateTime, nullable=False),
    Column("last_seen", UTCDateTime, nullable=False),
    # Its prefix (person_id, scope) is a person's names in one chat.
    UniqueConstraint("person_id", "scope", "normalised", "source"),
    CheckConstraint(_in("source", NAME_SOURCES), name="source"),
)
# Who in a chat answers to a name.
Index("ix_person_names_scope_normalised", person_names.c.scope, person_names.c.normalised)

# A short card per member of a group, written by the nightly `people` step from the
# memories about that member (migration 0028): versioned like the chat cards (a change
# inserts the next version, numbered in SQL), one card per (chat, member), never across
# chats. `user_id` is the member's id on the chat's platform.
person_cards = Table(
    "person_cards",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(64), nullable=False),
    Column("user_id", String(64), nullable=False),
    Column("version", Integer, nullable=False),
    Column("content", Text, nullable=False),
    Column("day", String(10)),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("scope", "user_id", "version"),
)

# How far `yuji people rebuild` walked the archive (the last experience id it indexed),
# committed with each batch, so an interrupted run continues there.
people_progress = Table(
    "people_progress",
    metadata,
    Column("job", String(32), primary_key=True),
    Column("last_id", Integer, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# --- carrying: a person's own words in their other chats (#45, migration 0029) ---------

# What a person chose for their own words said in groups (`/carry private|groups on|off`);
# no row is the default: into their private chat on, into their other groups off.
carry_choices = Table(
    "carry_choices",
    metadata,
    Column("platform", String(16), primary_key=True),
    Column("user_id", String(64), primary_key=True),
    Column("into_private", Boolean, nullable=False),
    Column("into_groups", Boolean, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# A chat whose admin refused anything carried into it (`/carry block`).
carry_blocks = Table(
    "carry_blocks",
    metadata,
    Column("scope", String(64), primary_key=True),
    Column("blocked_by", String(64), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

# A member seen leaving a chat (a leave notice), and when: nothing is carried to them
# there unless they speak there again after it.
chat_departures = Table(
    "chat_departures",
    metadata,
    Column("scope", String(64), primary_key=True),
    Column("user_id", String(64), primary_key=True),
    Column("left_at", UTCDateTime, nullable=False),
)

# Truth tables: backups compare their row counts; gc never deletes from them.
TRUTH_TABLES = (
    "experiences",
    "experience_attachments",
    "memories",
    "memory_versions",
    "memory_evidence",
    "memory_relations",
    "aliases",
)
