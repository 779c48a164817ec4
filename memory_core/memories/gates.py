"""Validation rules of the write API (pure): evidence shape and the four supersede gates.

docs/design.md#memories: supersede(old, new) closes the old memory only when
  1. the new memory rests on explicit evidence,
  2. the call was made explicitly (a named actor and a stated reason, not inferred),
  3. it names one concrete other memory of the same chat (ids of another chat are
     refused earlier as not found),
  4. validation passes: both memories are active, the old one is still open, and
     the new one does not start before the old one.
Any failure degrades the call to `contradicts`: both memories stay active.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_core.errors import ValidationError
from memory_core.types import EvidenceRef, Memory

INFERRED_ACTORS = ("auto", "inferred", "heuristic")
"""`changed_by` prefixes that mark a change nobody asked for explicitly."""


def check_evidence_shape(refs: Sequence[EvidenceRef]) -> None:
    for ref in refs:
        targets = [ref.experience_id, ref.memory_id, ref.fragment_id]
        if sum(t is not None for t in targets) != 1:
            raise ValidationError(
                "each evidence item points to exactly one experience, memory or fragment"
            )
        if not ref.role.strip():
            raise ValidationError("evidence role must not be empty")


def is_explicit(reason: str, changed_by: str) -> bool:
    actor = changed_by.strip().lower()
    return bool(reason.strip()) and bool(actor) and not actor.startswith(INFERRED_ACTORS)


def supersede_failures(
    old: Memory, new: Memory, *, new_evidence: int, reason: str, changed_by: str
) -> list[str]:
    """Every gate the pair fails, in plain words; empty means supersede may apply."""
    failures: list[str] = []
    if new_evidence < 1:
        failures.append(f"#{new.id} has no evidence")
    if not is_explicit(reason, changed_by):
        failures.append("not an explicit call (a reason and a named actor are required)")
    if old.id == new.id:
        failures.append("a memory cannot supersede itself")
    if old.status != "active":
        failures.append(f"#{old.id} is {old.status}, not active")
    if old.valid_to is not None:
        failures.append(f"#{old.id} is already closed")
    if new.status != "active":
        failures.append(f"#{new.id} is {new.status}, not active")
    if new.valid_to is not None:
        failures.append(f"#{new.id} is itself closed")
    if old.valid_from and new.valid_from and new.valid_from < old.valid_from:
        failures.append(f"#{new.id} starts before #{old.id}")
    return failures
