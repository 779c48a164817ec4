"""The leader's lock: which process of the deployment runs the once-only work.

On PostgreSQL it is a session-level advisory lock (`LEADER_LOCK`) held on one
connection of its own, outside the pool the work uses: the server releases it when
that connection dies, SIGKILL of the holder included, so another process takes it
at its next try. The holder checks its connection on every try; a connection that
no longer answers is a lost lock. On SQLite one process serves a database file
(the data folder's `bot.lock`), so it always holds it.
"""

from __future__ import annotations

import contextlib
from typing import Protocol

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from memory_core.storage.engine import Database

LEADER_LOCK = 0x79756A6C  # "yujl": not the write turn's key
CHECK_TIMEOUT_S = 5.0


class LeaderLock(Protocol):
    async def hold(self) -> bool:
        """Take the lock if free, or check it is still held; True while held."""
        ...

    async def release(self) -> None: ...

    @property
    def reachable(self) -> bool:
        """The last try reached the server (False: the lock was lost with it)."""
        ...


class AlwaysHeld:
    """SQLite: the one process of the file leads."""

    reachable = True

    async def hold(self) -> bool:
        return True

    async def release(self) -> None:
        return None


class AdvisoryLock:
    """PostgreSQL: `pg_try_advisory_lock` on a connection kept for it alone."""

    def __init__(self, url: str, key: int = LEADER_LOCK) -> None:
        self._engine: AsyncEngine = create_async_engine(
            url, poolclass=NullPool, connect_args={"command_timeout": CHECK_TIMEOUT_S}
        )
        self._key = key
        self._conn: AsyncConnection | None = None
        self._held = False
        self._reachable = True

    @property
    def reachable(self) -> bool:
        return self._reachable

    async def hold(self) -> bool:
        try:
            if self._conn is None:
                self._conn = await self._engine.connect()
            if self._held:
                await self._conn.exec_driver_sql("SELECT 1")
            else:
                result = await self._conn.exec_driver_sql(
                    f"SELECT pg_try_advisory_lock({self._key})"
                )
                self._held = bool(result.scalar())
            await self._conn.rollback()  # idle, not idle in transaction
        except (SQLAlchemyError, OSError, TimeoutError):
            self._reachable = False
            await self._drop()
        else:
            self._reachable = True
        return self._held

    async def release(self) -> None:
        await self._drop()
        await self._engine.dispose()

    async def _drop(self) -> None:
        # Closing the session releases a session-level lock on the server.
        conn, self._conn, self._held = self._conn, None, False
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.invalidate()
                await conn.close()


def leader_lock(db: Database) -> LeaderLock:
    return AdvisoryLock(db.url) if db.is_postgres else AlwaysHeld()
