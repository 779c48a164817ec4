"""Which database backend a store runs on, as `yuji status`, `/status` and the
console say it: "SQLite <file>" or "PostgreSQL <version> (<host>/<database>)",
password never shown; and how much room it takes."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from .engine import Database
from .postgres.pg_server import database_size, label, server_info


async def database_line(db: Database) -> str:
    if db.is_postgres:
        async with db.read() as conn:
            info = await server_info(conn)
        return f"PostgreSQL {info.version} ({label(db.url)})"
    path = db.sqlite_path
    if db.is_sqlite:
        return f"SQLite {path.resolve() if path is not None else ':memory:'}"
    return db.url.split(":", 1)[0]


async def database_bytes(db: Database) -> int:
    """What the store takes: the SQLite file with its -wal and -shm, or
    `pg_database_size` on PostgreSQL (0 for an in-memory SQLite)."""
    if db.is_postgres:
        async with db.read() as conn:
            return await database_size(conn)
    path = db.sqlite_path
    return 0 if path is None else await asyncio.to_thread(sqlite_bytes, path)


def sqlite_bytes(path: Path) -> int:
    """A SQLite file with its -wal and -shm (what it holds that a checkpoint has not
    yet moved into the file counts too)."""
    total = 0
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            total += path.with_name(path.name + suffix).stat().st_size
    return total
