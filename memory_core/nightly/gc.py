"""Which memories go cold, and which log files are past retention: pure rules.

A memory goes cold (status `cold`: out of everyday recall, still searchable when the
question looks back) only when every rule agrees:

- it has not been touched for `cold_after_days` (last access, else creation);
- it was never credited (the model never cited it in a reply);
- it is neither pinned nor starred;
- it is not part of a supersede or contradict chain (those explain each other);
- its type is not exempt (default: `rule`, the agreements of the chat);
- it is less important than `keep_importance`.

Nothing is deleted: the caller changes the status through the memory service, which
keeps the version history.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory_core.storage import GcCandidate as GcCandidate


@dataclass(frozen=True, slots=True)
class GcRules:
    cold_after_days: int = 120
    exempt_types: tuple[str, ...] = ("rule",)
    keep_importance: float = 0.9


def idle_since(candidate: GcCandidate) -> datetime:
    return candidate.last_accessed_at or candidate.created_at


def exemption(candidate: GcCandidate, rules: GcRules) -> str | None:
    """Why this memory may never go cold, or None."""
    if candidate.pinned:
        return "pinned"
    if candidate.starred:
        return "starred"
    if candidate.hit_count > 0:
        return "credited"
    if candidate.in_chain:
        return "in a supersede/contradict chain"
    if candidate.type in rules.exempt_types:
        return f"type {candidate.type}"
    if candidate.importance >= rules.keep_importance:
        return "important"
    return None


def is_cold(candidate: GcCandidate, now: datetime, rules: GcRules) -> bool:
    if rules.cold_after_days <= 0:
        return False
    if now - idle_since(candidate) < timedelta(days=rules.cold_after_days):
        return False
    return exemption(candidate, rules) is None


def select_cold(
    candidates: Iterable[GcCandidate], now: datetime, rules: GcRules, limit: int
) -> list[int]:
    """Ids to move to `cold`, the longest idle first, at most `limit`."""
    cold = [c for c in candidates if is_cold(c, now, rules)]
    cold.sort(key=lambda c: (idle_since(c), c.id))
    return [c.id for c in cold[: max(limit, 0)]]
