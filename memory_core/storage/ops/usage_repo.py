"""The model-usage aggregate's SQL: one row per model call, and totals per job.

Rows are written for failed calls too (tokens 0 when the provider never answered),
so a flaky provider shows up as calls with nothing to show for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import case, func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository
from memory_core.storage.schema import llm_usage


@dataclass(frozen=True, slots=True)
class UsageRow:
    at: datetime
    job: str
    model: str
    scope: str | None
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    latency_ms: int
    outcome: str


@dataclass(frozen=True, slots=True)
class JobTotals:
    job: str
    calls: int
    failed: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class UsageRepo(Repository):
    async def record(self, row: UsageRow, *, conn: AsyncConnection | None = None) -> None:
        async with self.writing(conn) as conn:
            await conn.execute(
                insert(llm_usage).values(
                    at=row.at,
                    job=row.job,
                    model=row.model[:200],
                    scope=row.scope,
                    prompt_tokens=row.prompt_tokens,
                    completion_tokens=row.completion_tokens,
                    cached_tokens=row.cached_tokens,
                    latency_ms=row.latency_ms,
                    outcome=row.outcome,
                )
            )

    async def totals(
        self, since: datetime, *, scope: str | None = None, conn: AsyncConnection | None = None
    ) -> list[JobTotals]:
        """Per job, every call at or after `since` (of one chat when `scope` is given)."""
        c = llm_usage.c
        query = (
            select(
                c.job,
                func.count(),
                func.sum(case((c.outcome != "ok", 1), else_=0)),
                func.sum(c.prompt_tokens),
                func.sum(c.completion_tokens),
                func.sum(c.cached_tokens),
            )
            .where(c.at >= since)
            .group_by(c.job)
            .order_by(c.job)
        )
        if scope is not None:
            query = query.where(c.scope == scope)
        async with self.reading(conn) as conn:
            rows = (await conn.execute(query)).all()
        return [
            JobTotals(str(job), int(n), int(bad or 0), int(p or 0), int(comp or 0), int(ca or 0))
            for job, n, bad, p, comp, ca in rows
        ]

    async def job_tokens(
        self, job: str, since: datetime, *, conn: AsyncConnection | None = None
    ) -> int:
        """Prompt plus completion tokens of `job`'s calls at or after `since` (a budget)."""
        c = llm_usage.c
        query = select(func.sum(c.prompt_tokens + c.completion_tokens)).where(
            c.job == job, c.at >= since
        )
        async with self.reading(conn) as conn:
            return int(await conn.scalar(query) or 0)

    async def rows(
        self, *, limit: int = 100, conn: AsyncConnection | None = None
    ) -> list[UsageRow]:
        """The newest calls first."""
        c = llm_usage.c
        query = select(llm_usage).order_by(c.id.desc()).limit(limit)
        async with self.reading(conn) as conn:
            result = (await conn.execute(query)).all()
        return [
            UsageRow(
                r.at,
                r.job,
                r.model,
                r.scope,
                r.prompt_tokens,
                r.completion_tokens,
                r.cached_tokens,
                r.latency_ms,
                r.outcome,
            )
            for r in result
        ]
