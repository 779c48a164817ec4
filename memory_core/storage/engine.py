"""The database handle: one SQLite file in WAL mode, one writer at a time.

Reads run concurrently on pooled connections; every write goes through `write()`,
which serialises writers in this process with an asyncio lock and opens the
transaction with `BEGIN IMMEDIATE`, so a second process (the CLI, `yuji embed`)
waits on the busy timeout instead of failing half-way through a read-then-write.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

BUSY_TIMEOUT_MS = 10_000


class Database:
    def __init__(self, url: str) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            path = self.sqlite_path
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
        self.engine: AsyncEngine = create_async_engine(
            url,
            connect_args={"timeout": BUSY_TIMEOUT_MS / 1000} if self.is_sqlite else {},
        )
        if self.is_sqlite:
            event.listen(self.engine.sync_engine, "connect", _sqlite_on_connect)
        self._write_lock = asyncio.Lock()

    @property
    def sqlite_path(self) -> Path | None:
        if not self.is_sqlite:
            return None
        _, _, rest = self.url.partition(":///")
        if not rest or rest == ":memory:":
            return None
        return Path(rest)

    @asynccontextmanager
    async def read(self) -> AsyncGenerator[AsyncConnection, None]:
        """A read transaction: one consistent snapshot for every statement in it."""
        async with self.engine.connect() as conn:
            if self.is_sqlite:
                await conn.exec_driver_sql("BEGIN")
            try:
                yield conn
            finally:
                await conn.rollback()

    @asynccontextmanager
    async def write(self) -> AsyncGenerator[AsyncConnection, None]:
        """The single writer: commits on success, rolls back on any exception."""
        async with self._write_lock, self.engine.connect() as conn:
            if self.is_sqlite:
                await conn.exec_driver_sql("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                await conn.rollback()
                raise
            await conn.commit()

    async def dispose(self) -> None:
        await self.engine.dispose()


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    # Take transaction control away from the driver: `read`/`write` issue BEGIN
    # themselves, which is the only way to get BEGIN IMMEDIATE.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    for pragma in (
        "PRAGMA journal_mode=WAL",
        "PRAGMA synchronous=NORMAL",
        "PRAGMA foreign_keys=ON",
        f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
    ):
        cursor.execute(pragma)
    cursor.close()
