"""Which database backend a store runs on, as `yuji status`, `/status` and the
console say it: "SQLite <file>" or "PostgreSQL <version> (<host>/<database>)",
password never shown."""

from __future__ import annotations

from .engine import Database
from .pg_server import label, server_info


async def database_line(db: Database) -> str:
    if db.is_postgres:
        async with db.read() as conn:
            info = await server_info(conn)
        return f"PostgreSQL {info.version} ({label(db.url)})"
    path = db.sqlite_path
    if db.is_sqlite:
        return f"SQLite {path.resolve() if path is not None else ':memory:'}"
    return db.url.split(":", 1)[0]
