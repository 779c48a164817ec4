"""The eight steps of a night, in order: settle, diary, cards, people (3b), states (3.5),
events, followups, gc.

Each takes the `DayRun` of one (scope, day) and returns a `StepResult`; the runner
writes the checkpoint (diary and cards write theirs in the same transaction as their
rows). Every memory change goes through the memory service, with `nightly` as author.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from .context import DayRun, StepResult
from .step_followups import review
from .step_gc import collect
from .step_people import people
from .step_states import settle, states
from .step_writing import cards, diary, events

Step = Callable[[DayRun], Awaitable[StepResult]]

STEPS: tuple[tuple[str, Step], ...] = (
    ("settle", settle),
    ("diary", diary),
    ("cards", cards),
    ("people", people),
    ("states", states),
    ("events", events),
    ("followups", review),
    ("gc", collect),
)
