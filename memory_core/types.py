"""Value types shared across concepts: frozen dataclasses, never ORM rows."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Source = Literal["realtime", "backfill", "migrated"]
MemoryType = Literal["fact", "preference", "event", "relation", "state", "rule"]
MemoryStatus = Literal["active", "retracted", "cold"]
RelationKind = Literal["supports", "related", "contradicts", "supersedes", "merged"]
Stage = Literal["lexical", "vector", "graph"]
"""Which signal brought a recalled memory: its words (possibly its vector too), its
vector alone, or a link / the supersede chain from another candidate."""
CardKind = Literal[
    "preferences",
    "interaction_patterns",
    "recent_status",
    "goals",
    "relationships",
    "key_events",
    "interaction_rules",
]
"""The seven cards the nightly run keeps per chat."""


_SCOPE = re.compile(r"(group|private):[1-9][0-9]{0,19}")


def parse_scope(text: str) -> str:
    """A chat id as the operator types it: `group:<number>` or `private:<number>`."""
    scope = text.strip()
    if not _SCOPE.fullmatch(scope):
        raise ValueError(f"not a chat id: {text!r} (expected group:<number> or private:<number>)")
    return scope


def group_scope(group_id: int | str) -> str:
    return f"group:{group_id}"


def private_scope(user_id: int | str) -> str:
    return f"private:{user_id}"


@dataclass(frozen=True, slots=True)
class AttachmentRef:
    """An image/sticker segment to fetch: where it sits in the message and its URL."""

    segment_index: int
    url: str
    kind: str = "image"


@dataclass(frozen=True, slots=True)
class NewExperience:
    scope: str
    fingerprint: str
    sender_id: str
    text: str
    sent_at: datetime
    segments: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    sender_name: str = ""
    is_bot: bool = False
    reply_to: str | None = None
    source: Source = "realtime"
    attachments: tuple[AttachmentRef, ...] = ()
    account: str | None = None
    """The bot's QQ account that heard (or sent) it; None for imports. Two accounts
    of one deployment hearing one message archive it once (storage/archive/archive_dedup.py)."""


@dataclass(frozen=True, slots=True)
class Experience:
    id: int
    scope: str
    fingerprint: str
    sender_id: str
    sender_name: str
    is_bot: bool
    text: str
    segments: list[dict[str, Any]]
    reply_to: str | None
    sent_at: datetime
    received_at: datetime
    source: Source


@dataclass(frozen=True, slots=True)
class Memory:
    id: int
    scope: str
    type: MemoryType
    subject: str
    content: str
    importance: float
    confidence: float
    status: MemoryStatus
    valid_from: datetime | None
    valid_to: datetime | None
    version: int
    origin: str
    created_at: datetime
    updated_at: datetime
    last_accessed_at: datetime | None
    hit_count: int
    pinned: bool
    starred: bool


@dataclass(frozen=True, slots=True)
class EvidenceRef:
    """What a memory rests on: exactly one of an experience, a memory or a fragment."""

    experience_id: int | None = None
    memory_id: int | None = None
    fragment_id: int | None = None
    role: str = "primary"


Band = Literal["sure", "related"]
"""How sure recall is that an injected memory answers the question."""


@dataclass(frozen=True, slots=True)
class Recalled:
    memory: Memory
    stage: Stage
    score: float
    """P(relevant) from the relevance model."""
    reason: str
    band: Band = "sure"
    """`sure`: P at or above the sure line, the persona may state it; `related`: below
    it, shown as possibly about another person or thing, never stated as fact."""
    why: tuple[tuple[str, float], ...] = ()
    """The features that moved P most (name, log-odds contribution)."""


@dataclass(frozen=True, slots=True)
class Quoted:
    """A message of the asking chat not consolidated yet, recalled as a quote: who
    said it, when, the words; never a fact the bot learned."""

    message: Experience
    score: float
    """P(relevant) from the relevance model (the message read as a memory whose
    subject is its sender)."""
    band: Band = "related"
    why: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class RecallResult:
    items: tuple[Recalled, ...]
    retrospective: bool = False
    trace: tuple[str, ...] = ()
    quotes: tuple[Quoted, ...] = ()
    """Recent messages of the chat, not yet consolidated, that answer (at most three)."""


@dataclass(frozen=True, slots=True)
class MemoryVersion:
    """One row of a memory's history: what it said from `changed_at` on, who changed
    it and why."""

    memory_id: int
    version: int
    type: MemoryType
    subject: str
    content: str
    importance: float
    confidence: float
    status: MemoryStatus
    valid_from: datetime | None
    valid_to: datetime | None
    changed_at: datetime
    changed_by: str
    reason: str
