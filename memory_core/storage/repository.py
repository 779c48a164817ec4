"""The base every repository shares: it holds the `Database`, and each of its
methods takes an optional open connection (`conn=`).

Given a connection, a method runs inside the caller's transaction, so a service
composes several calls (of one repository or several) into one `Database.write()`
or `.read()`; given none, the method opens its own transaction. (Only work on the
whole file, which cannot run inside a transaction, takes none: `RedactionRepo`'s
`purge_log` and `vacuum`. A test keeps it so.)

A write that depends on what is there is one statement deciding in SQL: an upsert
against a UNIQUE key (`upsert` below), an UPDATE guarded by the value read (its
rowcount says whether it held), or an INSERT ... SELECT that numbers the row itself.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Collection
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from .engine import Database


class Repository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def reading(self, conn: AsyncConnection | None) -> AbstractAsyncContextManager[AsyncConnection]:
        """`conn` itself, or a read transaction of its own."""
        return _within(conn) if conn is not None else self.db.read()

    def writing(
        self, conn: AsyncConnection | None, chats: Collection[str] = ()
    ) -> AbstractAsyncContextManager[AsyncConnection]:
        """`conn` itself (the caller's write transaction), or a write of its own (of
        these `chats` only, when given: `Database.write`)."""
        return _within(conn) if conn is not None else self.db.write(chats)


def upsert(conn: AsyncConnection, table: Table) -> sqlite.Insert | postgresql.Insert:
    """An INSERT of the connection's dialect that takes `on_conflict_do_nothing` /
    `on_conflict_do_update` against a UNIQUE constraint: one statement, where a
    look-then-insert would race another writer."""
    module = postgresql if conn.dialect.name == "postgresql" else sqlite
    return module.insert(table)


@asynccontextmanager
async def _within(conn: AsyncConnection) -> AsyncGenerator[AsyncConnection, None]:
    yield conn
