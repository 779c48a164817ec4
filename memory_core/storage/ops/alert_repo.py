"""SQL of the alert log: the alerts and recoveries the alert gate sent, so the console
can show the last seven days across restarts. Old rows are pruned as new ones come."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository
from memory_core.storage.schema import alert_log


@dataclass(frozen=True, slots=True)
class AlertRecord:
    """One alert or recovery as the operator was told it."""

    at: datetime
    key: str
    text: str
    recovered: bool


class AlertRepo(Repository):
    async def add(
        self,
        records: Sequence[AlertRecord],
        *,
        prune_before: datetime,
        conn: AsyncConnection | None = None,
    ) -> None:
        """Append `records` and drop the rows older than `prune_before`, in one write."""
        async with self.writing(conn) as conn:
            if records:
                await conn.execute(
                    insert(alert_log),
                    [
                        {"at": r.at, "key": r.key, "text": r.text, "recovered": r.recovered}
                        for r in records
                    ],
                )
            await conn.execute(delete(alert_log).where(alert_log.c.at < prune_before))

    async def since(
        self, at: datetime, limit: int, *, conn: AsyncConnection | None = None
    ) -> list[AlertRecord]:
        """The rows at or after `at`, newest first (at most `limit`)."""
        a = alert_log.c
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(alert_log).where(a.at >= at).order_by(a.at.desc(), a.id.desc()).limit(limit)
            )
            return [AlertRecord(r.at, r.key, r.text, bool(r.recovered)) for r in rows]
