"""The image-description aggregate's SQL: one row per image content hash.

The queue is derived: a stored `image/*` attachment without a row is waiting. A
claim inserts a `pending` row; the worker finishes it as `done` (with the
description) or `failed`. Rows left `pending` too long are failed and released.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVarTuple

from sqlalchemy import Select, and_, func, insert, literal, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository
from memory_core.storage.schema import attachments, experience_attachments, image_descriptions

_Ts = TypeVarTuple("_Ts")
STALE_ERROR = "left in the queue too long"


@dataclass(frozen=True, slots=True)
class QueuedImage:
    sha256: str
    mime: str


def _unseen(query: Select[*_Ts]) -> Select[*_Ts]:
    """`query` over the stored images that have no row yet (never claimed)."""
    a, d = attachments.c, image_descriptions.c
    return query.outerjoin(image_descriptions, d.sha256 == a.sha256).where(
        a.status == "stored", a.mime.like("image/%"), d.sha256.is_(None)
    )


class VisionRepo(Repository):
    async def claim(
        self, now: datetime, limit: int, *, conn: AsyncConnection | None = None
    ) -> list[QueuedImage]:
        """Up to `limit` images never seen by the vision model, marked pending."""
        a = attachments.c
        query = _unseen(select(a.sha256, a.mime)).order_by(a.id).limit(limit)
        async with self.writing(conn) as conn:
            rows = (await conn.execute(query)).all()
            if rows:
                await conn.execute(
                    insert(image_descriptions),
                    [{"sha256": r.sha256, "status": "pending", "queued_at": now} for r in rows],
                )
        return [QueuedImage(str(r.sha256), str(r.mime)) for r in rows]

    async def finish(
        self,
        sha256: str,
        description: str,
        model: str,
        now: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        await self._close(
            sha256, now, conn=conn, status="done", description=description, model=model
        )

    async def fail(
        self, sha256: str, error: str, now: datetime, *, conn: AsyncConnection | None = None
    ) -> None:
        await self._close(sha256, now, conn=conn, status="failed", error=error[:500])

    async def _close(
        self, sha256: str, now: datetime, *, conn: AsyncConnection | None, **values: str
    ) -> None:
        """A pending row finished; a row no longer pending (released as stale meanwhile)
        is left as it is."""
        d = image_descriptions.c
        async with self.writing(conn) as conn:
            await conn.execute(
                update(image_descriptions)
                .where(d.sha256 == sha256, d.status == "pending")
                .values(finished_at=now, **values)
            )

    async def release_stale(
        self, queued_before: datetime, now: datetime, *, conn: AsyncConnection | None = None
    ) -> int:
        d = image_descriptions.c
        async with self.writing(conn) as conn:
            result = await conn.execute(
                update(image_descriptions)
                .where(d.status == "pending", d.queued_at < queued_before)
                .values(status="failed", error=STALE_ERROR, finished_at=now)
            )
        return int(result.rowcount or 0)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]

    async def skip_unclaimed(
        self, first_seen_before: datetime, now: datetime, *, conn: AsyncConnection | None = None
    ) -> int:
        """Images first seen before `first_seen_before` and never claimed (a backlog the
        worker did not reach in time, or images from before a vision model was set):
        failed, so the queue only ever holds new images."""
        a = attachments.c
        waiting = _unseen(
            select(
                a.sha256,
                literal("failed"),
                literal(STALE_ERROR),
                a.first_seen,
                literal(now, image_descriptions.c.finished_at.type),
            )
        ).where(a.first_seen < first_seen_before)
        columns = ["sha256", "status", "error", "queued_at", "finished_at"]
        async with self.writing(conn) as conn:
            result = await conn.execute(insert(image_descriptions).from_select(columns, waiting))
        return int(result.rowcount or 0)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]

    async def descriptions(
        self, experience_ids: Sequence[int], *, conn: AsyncConnection | None = None
    ) -> dict[int, list[str | None]]:
        """experience id -> its linked images' descriptions in segment order (None for
        an image without one), for the experiences that have images at all."""
        if not experience_ids:
            return {}
        ea, a, d = experience_attachments.c, attachments.c, image_descriptions.c
        query = (
            select(ea.experience_id, d.description, d.status)
            .join(attachments, a.id == ea.attachment_id)
            .outerjoin(image_descriptions, and_(d.sha256 == a.sha256))
            .where(ea.experience_id.in_(list(experience_ids)), a.mime.like("image/%"))
            .order_by(ea.experience_id, ea.segment_index)
        )
        async with self.reading(conn) as conn:
            rows = (await conn.execute(query)).all()
        out: dict[int, list[str | None]] = {}
        for exp_id, description, status in rows:
            out.setdefault(int(exp_id), []).append(description if status == "done" else None)
        return out

    async def counts(self, *, conn: AsyncConnection | None = None) -> dict[str, int]:
        d = image_descriptions.c
        async with self.reading(conn) as conn:
            rows = (await conn.execute(select(d.status, func.count()).group_by(d.status))).all()
        return {str(status): int(n) for status, n in rows}
