"""What each console page shows: frozen read models built by `ConsoleService`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from memory_core.archive.drops import ArchiveHealth
from memory_core.nightly.types import LastRun
from memory_core.ops.alerts import AlertRecord
from memory_core.ops.backend import Backend
from memory_core.ops.status import OpsStatus
from memory_core.storage import (
    Batch,
    Card,
    Fragment,
    Injection,
    LinkedAttachment,
    Person,
    PersonCard,
    PersonName,
    RelationRow,
)
from memory_core.types import Experience, Memory, MemoryVersion

Via = Literal["session", "bearer"]


@dataclass(frozen=True, slots=True)
class Actor:
    """Who asks for a change: the client address and how they got in."""

    address: str
    via: Via


@dataclass(frozen=True, slots=True)
class ChatRow:
    scope: str
    messages: int
    memories: int
    pending: int
    last_batch: Batch | None
    muted_until: datetime | None
    night: LastRun
    backlog_chars: int = 0
    """Characters of the messages consolidation has not acknowledged yet."""
    lag_s: float = 0.0
    """Seconds the oldest of them has waited (0 when nothing waits)."""
    name: str = ""
    """What the client calls the chat (the group's name, the person's nickname); empty
    when it never said."""


@dataclass(frozen=True, slots=True)
class DayChart:
    days: tuple[str, ...]
    """Local days, oldest first ("MM-DD")."""
    messages: tuple[int, ...]
    memories: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Overview:
    chats: tuple[ChatRow, ...]
    ops: OpsStatus
    alerts: tuple[AlertRecord, ...]
    chart: DayChart
    online: bool | None
    """Whether the QQ account is online; None when no client is connected."""
    backend: Backend | None = None
    """Which database and vector store run."""
    halted: str | None = None
    """Why consolidation starts no batch (no model, no tool calling): the backlog stays."""
    archive: ArchiveHealth | None = None
    """The archive writer: queued, held while the store refuses, dropped since start."""


@dataclass(frozen=True, slots=True)
class Message:
    experience: Experience
    images: tuple[LinkedAttachment, ...]


@dataclass(frozen=True, slots=True)
class ArchivePage:
    messages: tuple[Message, ...]
    older: int | None = None
    """A text search stopped here: search on among the messages before this id."""
    window: int = 0
    """How many messages one text search reads (0: not a search)."""


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    """One piece of evidence with what it leads to: a message, a memory, or a
    fragment summary with the messages it covered."""

    role: str
    message: Message | None = None
    memory: Memory | None = None
    fragment: Fragment | None = None
    fragment_messages: tuple[Message, ...] = ()
    missing: str = ""


@dataclass(frozen=True, slots=True)
class Related:
    relation: RelationRow
    other: Memory | None
    outgoing: bool


@dataclass(frozen=True, slots=True)
class MemoryDetail:
    memory: Memory
    versions: tuple[MemoryVersion, ...]
    evidence: tuple[EvidenceItem, ...]
    relations: tuple[Related, ...]
    aliases: tuple[tuple[str, str], ...]
    """(alias, canonical) pairs of this chat naming the memory's subject."""


@dataclass(frozen=True, slots=True)
class MemoryPage:
    items: tuple[Memory, ...]
    total: int
    subjects: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CardView:
    kind: str
    label: str
    versions: tuple[Card, ...]
    """Oldest first."""
    diffs: tuple[tuple[tuple[str, str], ...], ...]
    """diffs[i]: from version i to version i+1 ("+"/"-"/" ", line)."""


@dataclass(frozen=True, slots=True)
class Turn:
    injection: Injection
    trigger: Experience | None
    memories: dict[int, Memory]
    messages: dict[int, Experience] = field(default_factory=dict[int, Experience])
    """The quoted recent messages, as archived now (a redacted one reads as its tombstone)."""


@dataclass(frozen=True, slots=True)
class Member:
    """One member of a chat as the people page lists them (the person index's reading)."""

    person: Person
    name: str
    """What they go by in the chat now (pure.current_name)."""
    names: tuple[PersonName, ...]
    """Every name they went by in this chat, latest first."""
    memories: Mapping[str, int] = field(default_factory=dict[str, int])
    """This chat's memories about them, per word ("self", "self-only", "hearsay"; ""
    for a memory whose word is unknown)."""
    card: PersonCard | None = None
    """Their current card in this chat (the nightly `people` step's newest version)."""

    @property
    def memory_count(self) -> int:
        return sum(self.memories.values())

    @property
    def first_seen(self) -> datetime | None:
        """When a name of theirs was first seen in this chat (the person's own first and
        last sightings span every chat, so the page never shows them)."""
        return min((n.first_seen for n in self.names), default=None)

    @property
    def last_seen(self) -> datetime | None:
        return max((n.last_seen for n in self.names), default=None)


@dataclass(frozen=True, slots=True)
class MemberDetail:
    """One member of a chat: their names over time and the chat's memories about them."""

    member: Member
    memories: tuple[Memory, ...]
    """Newest first (any status; never a forgotten person's)."""
