"""Which chat gets the next batch, and what goes into it. Pure: no I/O, no clock.

A chat is eligible with >= 12 unacknowledged experiences or when its oldest one has
waited 2 hours; one batch at a time across all chats, oldest waiting first; at most 4
batches started per hour; a batch latches a contiguous run of the chat's pending
experiences (<= 40 messages, <= 6,000 characters) and never splits a message
(docs/design.md#consolidation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory_core.storage.consolidation_repo import Cut as Cut
from memory_core.storage.consolidation_repo import Pending as Pending


@dataclass(frozen=True, slots=True)
class Limits:
    max_messages: int = 40
    max_chars: int = 6000
    min_pending: int = 12
    max_wait: timedelta = timedelta(hours=2)
    hourly_cap: int = 4
    failure_penalty: timedelta = timedelta(hours=1)
    """Per consecutive failure (up to MAX_PENALISED), a chat queues as if its oldest
    message were this much younger: a chat whose batches keep failing cannot starve
    the others, and is still retried."""


@dataclass(frozen=True, slots=True)
class Item:
    """One pending experience as the cut sees it."""

    id: int
    chars: int


MAX_PENALISED = 6


def queue_key(pending: Pending, limits: Limits) -> tuple[datetime, str]:
    """Oldest waiting first; failing chats step back; ties by scope (a total order)."""
    assert pending.oldest_at is not None
    penalty = limits.failure_penalty * min(max(pending.failures, 0), MAX_PENALISED)
    return (pending.oldest_at + penalty, pending.scope)


def is_eligible(pending: Pending, now: datetime, limits: Limits) -> bool:
    if pending.count <= 0:
        return False
    if pending.count >= limits.min_pending:
        return True
    return pending.oldest_at is not None and now - pending.oldest_at >= limits.max_wait


def serial_order(
    pendings: Sequence[Pending], now: datetime, limits: Limits, *, force: bool = False
) -> list[Pending]:
    """Eligible chats in `queue_key` order: oldest waiting first, failing chats later.

    `force` drops the thresholds: any chat with something pending qualifies.
    """
    chosen = [
        p
        for p in pendings
        if (p.count > 0 if force else is_eligible(p, now, limits)) and p.oldest_at is not None
    ]
    return sorted(chosen, key=lambda p: queue_key(p, limits))


def under_hourly_cap(started: Sequence[datetime], now: datetime, cap: int) -> bool:
    """May another batch start? `started` are start instants of earlier batches."""
    window_start = now - timedelta(hours=1)
    recent = sum(1 for t in started if window_start < t <= now)
    return recent < cap


def cut(items: Sequence[Item], limits: Limits) -> Cut | None:
    """The longest prefix of `items` within both caps; never empty when items exist.

    A single message longer than `max_chars` forms a batch of its own.
    """
    if not items:
        return None
    count = 0
    chars = 0
    for item in items[: max(1, limits.max_messages)]:
        if count > 0 and chars + item.chars > limits.max_chars:
            break
        count += 1
        chars += item.chars
        if chars >= limits.max_chars:
            break
    return Cut(first_id=items[0].id, last_id=items[count - 1].id, count=count, chars=chars)
