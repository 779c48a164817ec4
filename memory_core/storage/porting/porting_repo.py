"""SQL of imports: how far an import got (checkpoints), what it already wrote
(import keys) and which fingerprints the archive already holds. Both writes are
upserts against a UNIQUE key; every method takes an optional open connection (see
repository.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import experiences, import_checkpoints, import_keys

FINGERPRINT_CHUNK = 900


class PortingRepo(Repository):
    # --- checkpoints -----------------------------------------------------------------

    async def checkpoint(
        self, kind: str, source_key: str, scope: str, *, conn: AsyncConnection | None = None
    ) -> tuple[int, dict[str, Any], bool] | None:
        """(position, counts, finished) of an earlier run, or None."""
        c = import_checkpoints.c
        async with self.reading(conn) as conn:
            row = (
                await conn.execute(
                    select(c.position, c.counts, c.finished_at).where(
                        c.kind == kind, c.source_key == source_key, c.scope == scope
                    )
                )
            ).first()
        if row is None:
            return None
        return int(row.position), dict(row.counts), row.finished_at is not None

    async def save_checkpoint(
        self,
        kind: str,
        source_key: str,
        scope: str,
        *,
        position: int,
        counts: dict[str, Any],
        at: datetime,
        finished: bool = False,
        conn: AsyncConnection | None = None,
    ) -> None:
        c = import_checkpoints.c
        values: dict[str, Any] = {
            "position": position,
            "counts": counts,
            "updated_at": at,
            "finished_at": at if finished else None,
        }
        async with self.writing(conn) as conn:
            await conn.execute(
                upsert(conn, import_checkpoints)
                .values(kind=kind, source_key=source_key, scope=scope, **values)
                .on_conflict_do_update(index_elements=[c.kind, c.source_key, c.scope], set_=values)
            )

    # --- archive reads the import needs -----------------------------------------------

    async def existing_fingerprints(
        self, scope: str, fingerprints: Sequence[str], *, conn: AsyncConnection | None = None
    ) -> set[str]:
        found: set[str] = set()
        e = experiences.c
        async with self.reading(conn) as conn:
            for start in range(0, len(fingerprints), FINGERPRINT_CHUNK):
                chunk = list(fingerprints[start : start + FINGERPRINT_CHUNK])
                rows = await conn.execute(
                    select(e.fingerprint).where(e.scope == scope, e.fingerprint.in_(chunk))
                )
                found.update(str(r[0]) for r in rows)
        return found

    # --- import keys ------------------------------------------------------------------

    async def keyed_memory(
        self, scope: str, source: str, key: str, *, conn: AsyncConnection | None = None
    ) -> int | None:
        k = import_keys.c
        async with self.reading(conn) as conn:
            value = await conn.scalar(
                select(k.memory_id).where(k.scope == scope, k.source == source, k.key == key)
            )
        return None if value is None else int(value)

    async def keyed_memories(
        self, scope: str, source: str, *, conn: AsyncConnection | None = None
    ) -> dict[str, int]:
        k = import_keys.c
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(k.key, k.memory_id).where(k.scope == scope, k.source == source)
            )
            return {str(key): int(mid) for key, mid in rows}

    async def set_key(
        self,
        scope: str,
        source: str,
        key: str,
        memory_id: int,
        at: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        k = import_keys.c
        async with self.writing(conn) as conn:
            await conn.execute(
                upsert(conn, import_keys)
                .values(scope=scope, source=source, key=key, memory_id=memory_id, created_at=at)
                .on_conflict_do_update(
                    index_elements=[k.scope, k.source, k.key], set_={"memory_id": memory_id}
                )
            )
