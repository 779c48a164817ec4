"""What the model costs: tokens per job today and over the last 7 days, and how much
of the prompt the provider served from its cache (`core.usage`).

`/status` shows one chat's calls, `yuji status` every chat's. Days are calendar
days in the configured zone; "7 days" is today and the six before it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from memory_core.clock import Clock
from memory_core.storage import JobTotals, UsageRepo

JOB_LABELS = {
    "chat": "聊天",
    "consolidation": "整理",
    "nightly": "夜间",
    "vision": "看图",
    "judge": "判断",
    "embed": "向量",
    "rerank": "重排",
    "followup": "跟进",
}


def day_starts(now: datetime, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """(start of today, start of the day six days before), both in `zone`."""
    midnight = now.astimezone(zone).replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight, midnight - timedelta(days=6)


def cache_share(totals: JobTotals) -> float:
    return totals.cached_tokens / totals.prompt_tokens if totals.prompt_tokens else 0.0


def human_tokens(n: int) -> str:
    return f"{n / 10000:.1f}万" if n >= 10000 else str(n)


def usage_line(totals: Sequence[JobTotals]) -> str:
    """`聊天 1.2万（缓存 45%），整理 3000（缓存 0%，失败 2 次）` or `无`. Pure."""
    if not totals:
        return "无"
    parts: list[str] = []
    for t in totals:
        extra = f"，失败 {t.failed} 次" if t.failed else ""
        parts.append(
            f"{JOB_LABELS.get(t.job, t.job)} {human_tokens(t.tokens)}"
            f"（缓存 {cache_share(t):.0%}{extra}）"
        )
    return "，".join(parts)


def usage_json(totals: Sequence[JobTotals]) -> dict[str, Any]:
    return {
        t.job: {
            "calls": t.calls,
            "failed": t.failed,
            "prompt_tokens": t.prompt_tokens,
            "completion_tokens": t.completion_tokens,
            "cached_tokens": t.cached_tokens,
            "cache_hit_share": round(cache_share(t), 4),
        }
        for t in totals
    }


class UsageReport:
    def __init__(self, repo: UsageRepo, clock: Clock, zone: ZoneInfo) -> None:
        self.repo = repo
        self.clock = clock
        self.zone = zone

    async def totals(self, scope: str | None = None) -> tuple[list[JobTotals], list[JobTotals]]:
        """(today, last 7 days) per job."""
        today, week = day_starts(self.clock.now(), self.zone)
        return (
            await self.repo.totals(today, scope=scope),
            await self.repo.totals(week, scope=scope),
        )

    async def status_lines(self, scope: str) -> Mapping[str, str]:
        """`/status` lines: this chat's tokens per job (tokens in and out)."""
        today, week = await self.totals(scope)
        return {"模型用量（今天）": usage_line(today), "模型用量（7天）": usage_line(week)}

    async def summary(self) -> dict[str, Any]:
        """`yuji status`: every chat's calls per job."""
        today, week = await self.totals()
        return {"today": usage_json(today), "last_7_days": usage_json(week)}
