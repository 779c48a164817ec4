"""What the write API hands back besides the memory itself."""

from __future__ import annotations

from dataclasses import dataclass

from memory_core.types import Memory


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
