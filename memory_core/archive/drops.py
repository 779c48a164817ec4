"""The archive's record of the rows it gave up on, and of what it is holding.

A row is dropped only when the database refuses the row itself (a constraint it
breaks, a value it cannot hold: `storage.failures.write_failure`), never because the
store was away: those rows wait in the writer's queue. Every drop is counted here by
reason and chat, and the chat's earliest dropped instant is kept as a gap for the
backfill to fetch again from the client's history once the store takes rows again.
Counts are this process's since it started (`/status` and the console say so).
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import datetime

RECENT_KEPT = 20


@dataclass(frozen=True, slots=True)
class Drop:
    scope: str
    fingerprint: str
    received_at: datetime
    reason: str
    """The error's class (`ConstraintViolation`, `DataError`, ...)."""
    detail: str


@dataclass(slots=True)
class DropLog:
    total: int = 0
    by_reason: Counter[str] = field(default_factory=Counter[str])
    by_scope: Counter[str] = field(default_factory=Counter[str])
    recent: deque[Drop] = field(default_factory=lambda: deque[Drop](maxlen=RECENT_KEPT))
    gaps: dict[str, datetime] = field(default_factory=dict[str, datetime])
    """Chat -> the earliest receipt of a row dropped there and not backfilled since."""

    def add(self, drop: Drop) -> None:
        self.total += 1
        self.by_reason[drop.reason] += 1
        self.by_scope[drop.scope] += 1
        self.recent.append(drop)
        known = self.gaps.get(drop.scope)
        if known is None or drop.received_at < known:
            self.gaps[drop.scope] = drop.received_at

    def take_gaps(self) -> dict[str, datetime]:
        """The gaps to backfill, forgotten once taken."""
        gaps, self.gaps = self.gaps, {}
        return gaps


@dataclass(frozen=True, slots=True)
class ArchiveHealth:
    """What `/status` and the console show of the archive writer."""

    queued: int
    capacity: int
    held_s: float | None
    """How long the store has refused writes (None: it takes them)."""
    last_error: str
    outages: int
    """Times since start the store refused writes and the queue held the rows."""
    dropped: int
    dropped_by_reason: tuple[tuple[str, int], ...]


def health_lines(health: ArchiveHealth) -> dict[str, str]:
    """The archive's `/status` lines. Pure."""
    if health.held_s is None:
        state = f"正常，队列 {health.queued} 条"
    else:
        state = (
            f"数据库暂时写不进（已 {health.held_s:.0f} 秒：{health.last_error}），"
            f"{health.queued} 条消息在队列里等着重试（上限 {health.capacity}）"
        )
    if health.dropped:
        why = "、".join(f"{reason} {n}" for reason, n in health.dropped_by_reason)
        dropped = f"本次启动以来丢弃 {health.dropped} 条（{why}），可补拉的已交给补拉"
    else:
        dropped = "本次启动以来没有丢弃过消息"
    return {"归档": state, "归档丢弃": dropped}
