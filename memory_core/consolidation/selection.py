"""Which chat gets the next batch, and what goes into it. Pure: no I/O, no clock.

A chat is eligible with >= 12 unacknowledged
experiences or when its oldest one has waited 2 hours. Batches run as soon as a chat
is eligible, up to `consolidation_concurrency` chats at a time and never two in one
chat, while the token budget lasts (`within_budget`). Order (`queue_key`): chats that
woke the bot in the last week first, among them the one whose oldest unread message is
oldest; chats silent for a week after them. A batch latches a contiguous run of the
chat's pending experiences (<= 40 messages, <= 6,000 characters) and never splits a
message. The old hourly batch count survives only as an optional ceiling (0 = off)
(docs/design.md#consolidation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory_core.storage import Cut as Cut
from memory_core.storage import Pending as Pending


@dataclass(frozen=True, slots=True)
class Limits:
    max_messages: int = 40
    max_chars: int = 6000
    min_pending: int = 12
    max_wait: timedelta = timedelta(hours=2)
    hourly_cap: int = 0
    """Most batches started per rolling hour; 0 = no ceiling (the budget decides)."""
    tokens_per_hour: int = 0
    """Consolidation tokens allowed per rolling hour; 0 = no limit."""
    tokens_per_day: int = 0
    """...and per rolling 24 hours; 0 = no limit."""
    awake_window: timedelta = timedelta(days=7)
    """A chat that woke the bot within this long is served before silent ones."""
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


def is_awake(pending: Pending, now: datetime, limits: Limits) -> bool:
    """Did the chat wake the bot within `awake_window`?"""
    return pending.last_wake_at is not None and now - pending.last_wake_at <= limits.awake_window


def queue_key(pending: Pending, limits: Limits, now: datetime) -> tuple[bool, datetime, str]:
    """Awake chats first, then silent ones; within each, oldest waiting first; failing
    chats step back; ties by scope (a total order)."""
    assert pending.oldest_at is not None
    penalty = limits.failure_penalty * min(max(pending.failures, 0), MAX_PENALISED)
    return (not is_awake(pending, now, limits), pending.oldest_at + penalty, pending.scope)


def is_eligible(pending: Pending, now: datetime, limits: Limits) -> bool:
    if pending.count <= 0:
        return False
    if pending.count >= limits.min_pending:
        return True
    return pending.oldest_at is not None and now - pending.oldest_at >= limits.max_wait


def serial_order(
    pendings: Sequence[Pending], now: datetime, limits: Limits, *, force: bool = False
) -> list[Pending]:
    """Eligible chats in `queue_key` order: awake chats first, oldest waiting first,
    failing chats later.

    `force` drops the thresholds: any chat with something pending qualifies.
    """
    chosen = [
        p
        for p in pendings
        if (p.count > 0 if force else is_eligible(p, now, limits)) and p.oldest_at is not None
    ]
    return sorted(chosen, key=lambda p: queue_key(p, limits, now))


def next_due(pendings: Sequence[Pending], now: datetime, limits: Limits) -> datetime | None:
    """The earliest instant a chat that is not eligible yet becomes so by waiting."""
    due = [
        p.oldest_at + limits.max_wait
        for p in pendings
        if p.count > 0 and p.oldest_at is not None and not is_eligible(p, now, limits)
    ]
    return min(due, default=None)


def within_budget(used_hour: int, used_day: int, limits: Limits) -> str | None:
    """None when another batch may start; else why not (which budget is spent)."""
    if limits.tokens_per_hour and used_hour >= limits.tokens_per_hour:
        return f"hourly token budget spent ({used_hour} of {limits.tokens_per_hour})"
    if limits.tokens_per_day and used_day >= limits.tokens_per_day:
        return f"daily token budget spent ({used_day} of {limits.tokens_per_day})"
    return None


def under_hourly_cap(started: Sequence[datetime], now: datetime, cap: int) -> bool:
    """May another batch start? `started` are start instants of earlier batches;
    a cap of 0 is no ceiling."""
    if cap <= 0:
        return True
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


def lag_text(seconds: float) -> str:
    """A lag as people read it: 45 秒, 12 分钟, 3.5 小时."""
    if seconds < 60:
        return f"{seconds:.0f} 秒"
    if seconds < 3600:
        return f"{seconds / 60:.0f} 分钟"
    return f"{seconds / 3600:.1f} 小时"
