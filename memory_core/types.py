"""Value types shared across concepts: frozen dataclasses, never ORM rows."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Source = Literal["realtime", "backfill", "migrated"]
MemoryType = Literal["fact", "preference", "event", "relation", "state", "rule"]
MemoryStatus = Literal["active", "retracted", "cold"]
SubjectKind = Literal["person", "group", "bot", "thing", "unresolved"]
"""What a memory's subject is: a member (`subject_person` says who), the whole chat, the
bot, a named thing (a pet, a place, a game), or a member-like name that matches no one
of the chat (memory_core/people/subjects.py)."""
Word = Literal["self", "self-only", "hearsay"]
"""Whose word a memory about a person rests on: its evidence includes the person's own
messages (`self`), consists only of them (`self-only`), or has none of them (`hearsay`)."""
RelationKind = Literal["supports", "related", "contradicts", "supersedes", "merged"]
Stage = Literal["lexical", "vector", "graph", "carried"]
"""Which signal brought a recalled memory: its words (possibly its vector too), its
vector alone, a link / the supersede chain from another candidate, or the person's
own words carried from another group (memory_core/recall/carried.py)."""
NameSource = Literal["card", "nickname", "alias", "mention"]
"""Where the person index read a person's name in a chat (memory_core/people/): the
name a QQ group showed with their message (its card, else their nickname), their own
name elsewhere (a private chat, a Telegram group), the chat's aliases, another
member's @ of them."""
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


_SCOPE = re.compile(
    r"(?:(group|private):[1-9][0-9]{0,19})"
    r"|(?:([a-z][a-z0-9]{0,15})-(group|private):-?[1-9][0-9]{0,19})"
)
"""A chat (docs/design.md#scopes): QQ's `group:<id>` / `private:<id>` (positive ids, as
every store and dataset has them), or another platform's `<platform>-group:<id>` /
`<platform>-private:<id>` (e.g. `telegram-group:-1001234567890`: ids may be negative).
Two platforms' chats never share a scope, whatever their digits."""


def parse_scope(text: str) -> str:
    """A chat id as the operator types it: `group:<number>`, `private:<number>`, or
    with a platform in front: `telegram-group:<number>`."""
    scope = text.strip()
    if not _SCOPE.fullmatch(scope):
        raise ValueError(
            f"not a chat id: {text!r} (expected group:<number>, private:<number>, "
            "or <platform>-group:<number> / <platform>-private:<number>)"
        )
    return scope


def group_scope(group_id: int | str, platform: str = "") -> str:
    """`platform` empty for QQ (OneBot v11), else e.g. `telegram`."""
    return f"{platform}-group:{group_id}" if platform else f"group:{group_id}"


def private_scope(user_id: int | str, platform: str = "") -> str:
    return f"{platform}-private:{user_id}" if platform else f"private:{user_id}"


def is_group_scope(scope: str) -> bool:
    """A group chat of any platform (else a private one)."""
    return scope.partition(":")[0].rpartition("-")[2] == "group"


def scope_platform(scope: str) -> str:
    """`qq` for an unprefixed scope, else the platform in front."""
    kind = scope.partition(":")[0]
    return kind.rpartition("-")[0] or "qq"


PLATFORM_NAMES = {"qq": "QQ", "telegram": "Telegram"}


def platform_name(scope: str) -> str:
    """The platform of a scope as people write it (`QQ`, `Telegram`)."""
    platform = scope_platform(scope)
    return PLATFORM_NAMES.get(platform, platform)


def chat_label(scope: str, name: str = "") -> str:
    """A chat as a person would say it, platform first (the same digits on two
    platforms are two chats): `Telegram 群「摸鱼」(telegram-group:-100123)`."""
    kind = "群" if is_group_scope(scope) else "私聊"
    return f"{platform_name(scope)} {kind}{f'「{name}」' if name else ''}({scope})"


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
    subject_kind: SubjectKind | None = None
    """None: not resolved yet (a store from before people: `yuji people rebuild`)."""
    subject_person: str | None = None
    """The user id (on the chat's platform) of the member the memory is about."""
    word: Word | None = None
    """Whose word it is, for a memory about a member; None for any other subject."""


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
class Asker:
    """Who sent a wake: their platform id and the names they go by in its chat (the
    display name it came with first). A first-person wake ("我生日几号") is about them."""

    user_id: str
    names: tuple[str, ...] = ()


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
    subject_kind: SubjectKind | None = None
    subject_person: str | None = None
    word: Word | None = None
