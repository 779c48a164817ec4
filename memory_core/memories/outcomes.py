"""What the write API takes and what it hands back besides the memory itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memory_core.types import EvidenceRef, Memory, MemoryType


@dataclass(frozen=True, slots=True)
class NewMemory:
    """One memory to write (the keyword arguments of `Memories.write` as a value)."""

    type: MemoryType
    subject: str
    content: str
    evidence: Sequence[EvidenceRef]
    importance: float = 0.5
    confidence: float = 0.8
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    origin: str = "model"
    subject_id: str | None = None
    """The user id of the member it is about, when the writer knows it (it wins over
    the subject's text: memory_core/people/subjects.py)."""
    subject_kind: str | None = None
    """What the writer says the subject is (person, group, bot, thing), when it says."""


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    memory: Memory
    near_duplicate: Memory | None = None
    """The most similar recent memory of the same chat and type (a hint, never merged)."""
    similarity: float = 0.0


@dataclass(frozen=True, slots=True)
class SupersedeOutcome:
    applied: bool
    """False when a gate failed and the pair was recorded as `contradicts` instead."""
    detail: str
