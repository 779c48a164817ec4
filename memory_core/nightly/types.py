"""What the nightly run reports and what it hands to the chat prompt."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

Outcome = Literal["done", "skipped", "kept", "failed", "waiting", "blocked"]
"""done: ran now; skipped: nothing to do; kept: finished on an earlier run (resumed past
it); failed: raised, the run stops for this chat; waiting: no model configured;
blocked: not run — the circuit is open (retries stopped) or another process is
running this step right now."""


@dataclass(frozen=True, slots=True)
class StepReport:
    scope: str
    day: str
    step: str
    outcome: Outcome
    detail: str = ""
    attempts: int = 0
    """Model asks this step needed (0 when it asked none)."""


@dataclass(frozen=True, slots=True)
class StepStatus:
    step: str
    state: str
    attempts: int
    error: str | None
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class LastRun:
    """For `/status`: the latest night of a chat, step by step, and its health."""

    scope: str
    day: str | None
    steps: tuple[StepStatus, ...]
    consecutive_failures: int
    circuit_open: bool
    retry_at: datetime | None
    last_error: str | None
    last_success_at: datetime | None


@dataclass(frozen=True, slots=True)
class NightlyBlocks:
    """The nightly results as prompt blocks (docs/design.md#replies); empty until data exists."""

    states: tuple[str, ...] = ()
    cards: tuple[tuple[str, str], ...] = ()
    """(kind, text) in the fixed order of the seven cards, empty cards left out."""
    timeline: tuple[str, ...] = ()
    recent_diaries: tuple[tuple[str, str], ...] = ()
    """(day, text), oldest first."""
    background_diary: tuple[str, str] | None = None
    """(day, text) of an older day several recalled memories come from."""
