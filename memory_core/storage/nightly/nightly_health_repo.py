"""Per chat: the nightly run's failure streak, retry time and circuit breaker."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import nightly_scopes


@dataclass(frozen=True, slots=True)
class ScopeHealth:
    scope: str
    consecutive_failures: int = 0
    circuit_open: bool = False
    retry_at: datetime | None = None
    last_error: str | None = None
    last_run_at: datetime | None = None
    last_success_at: datetime | None = None


class NightlyHealthRepo(Repository):
    async def get(self, scope: str, *, conn: AsyncConnection | None = None) -> ScopeHealth:
        async with self.reading(conn) as conn:
            row = (
                await conn.execute(select(nightly_scopes).where(nightly_scopes.c.scope == scope))
            ).first()
        return ScopeHealth(scope) if row is None else _health(row)

    async def save(
        self, health: ScopeHealth, at: datetime, *, conn: AsyncConnection | None = None
    ) -> None:
        values = {
            "consecutive_failures": health.consecutive_failures,
            "circuit_open": health.circuit_open,
            "retry_at": health.retry_at,
            "last_error": health.last_error,
            "last_run_at": health.last_run_at,
            "last_success_at": health.last_success_at,
            "updated_at": at,
        }
        async with self.writing(conn) as conn:
            await conn.execute(
                upsert(conn, nightly_scopes)
                .values(scope=health.scope, **values)
                .on_conflict_do_update(index_elements=[nightly_scopes.c.scope], set_=values)
            )

    async def update(
        self,
        scope: str,
        at: datetime,
        change: Callable[[ScopeHealth], ScopeHealth],
        *,
        conn: AsyncConnection | None = None,
    ) -> tuple[ScopeHealth, ScopeHealth]:
        """The chat's health read, changed by `change` and saved in one write
        transaction (the caller's or its own), so no other writer's change falls
        between the read and the write. Returns (before, after)."""
        async with self.writing(conn) as conn:
            before = await self.get(scope, conn=conn)
            after = change(before)
            await self.save(after, at, conn=conn)
        return before, after

    async def retries_due(self, now: datetime, *, conn: AsyncConnection | None = None) -> list[str]:
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(nightly_scopes.c.scope)
                .where(
                    nightly_scopes.c.retry_at.is_not(None),
                    nightly_scopes.c.retry_at <= now,
                    nightly_scopes.c.circuit_open.is_(False),
                )
                .order_by(nightly_scopes.c.scope)
            )
            return [str(r[0]) for r in rows]


def _health(row: Row[Any]) -> ScopeHealth:
    return ScopeHealth(
        scope=str(row.scope),
        consecutive_failures=int(row.consecutive_failures),
        circuit_open=bool(row.circuit_open),
        retry_at=row.retry_at,
        last_error=row.last_error,
        last_run_at=row.last_run_at,
        last_success_at=row.last_success_at,
    )
