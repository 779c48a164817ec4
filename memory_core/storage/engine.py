"""The database handle: one SQLite file in WAL mode, one writer at a time.

Reads run concurrently on pooled connections; every write goes through `write()`,
which serialises writers in this process with an asyncio lock and opens the
transaction with `BEGIN IMMEDIATE`, so a second process (the CLI, `yuji embed`)
waits on the busy timeout instead of failing half-way through a read-then-write.
A writer still locked out after the busy timeout (`YUJI_DB_BUSY_TIMEOUT_S`) gets
`StorageBusy`, one line saying so, before anything was written.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from memory_core.errors import StorageBusy

BUSY_TIMEOUT_S = 30.0
_LOCKED = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class Database:
    def __init__(self, url: str, *, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        self.url = url
        self.busy_timeout_s = busy_timeout_s
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            path = self.sqlite_path
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
        self.engine: AsyncEngine = create_async_engine(
            url,
            connect_args={"timeout": busy_timeout_s} if self.is_sqlite else {},
        )
        if self.is_sqlite:
            busy_ms = round(busy_timeout_s * 1000)

            def on_connect(dbapi_connection: Any, _record: Any) -> None:
                _sqlite_on_connect(dbapi_connection, busy_ms)

            event.listen(self.engine.sync_engine, "connect", on_connect)
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
                await self._begin_immediate(conn)
            try:
                yield conn
            except BaseException:
                await conn.rollback()
                raise
            await conn.commit()

    async def _begin_immediate(self, conn: AsyncConnection) -> None:
        try:
            await conn.exec_driver_sql("BEGIN IMMEDIATE")
        except OperationalError as exc:
            if getattr(exc.orig, "sqlite_errorcode", None) not in _LOCKED:
                raise
            raise StorageBusy(
                f"another writer held the database for {self.busy_timeout_s:g} s "
                "(YUJI_DB_BUSY_TIMEOUT_S); nothing was written, try again"
            ) from None

    async def dispose(self) -> None:
        await self.engine.dispose()


def _sqlite_on_connect(dbapi_connection: Any, busy_ms: int) -> None:
    # Take transaction control away from the driver: `read`/`write` issue BEGIN
    # themselves, which is the only way to get BEGIN IMMEDIATE.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    for pragma in (
        "PRAGMA journal_mode=WAL",
        "PRAGMA synchronous=NORMAL",
        "PRAGMA foreign_keys=ON",
        f"PRAGMA busy_timeout={busy_ms}",
    ):
        cursor.execute(pragma)
    cursor.close()
