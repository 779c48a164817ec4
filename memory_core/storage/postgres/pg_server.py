"""A PostgreSQL server around one database: its version, whether the role may build
yuji's schema, the database's size and rows, and short-lived databases made beside it
(a backup's restore drill, an evaluation run).

Each call opens one connection of its own (no pool) from an SQLAlchemy URL: these
are operator-scale actions (a backup, a start, a status), never the bot's hot path.
A server that cannot be reached, a login it refuses and a database it does not have
are each one `StorageError` line naming the server and the fix, password never shown
(`refusal`).
"""

from __future__ import annotations

import secrets
import socket
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine
from sqlalchemy.pool import NullPool

from memory_core.errors import ConfigError, StorageError

CONNECT_TIMEOUT_S = 10.0
"""How long a connection attempt may take (asyncpg's own default is a minute)."""
MIN_SERVER_VERSION = 140000
"""PostgreSQL 14: `DROP DATABASE ... WITH (FORCE)` and the SQL migration 0016 writes."""


@dataclass(frozen=True, slots=True)
class ServerInfo:
    version_num: int
    """`server_version_num`, e.g. 180001."""
    version: str
    """`server_version`, e.g. "18.1"."""


def label(url: str) -> str:
    """ "host/database" for messages: the socket folder or host name, never a password."""
    parsed = make_url(url)
    host = parsed.host or str(parsed.query.get("host") or "localhost")
    port = f":{parsed.port}" if parsed.port else ""
    return f"{host}{port}/{parsed.database or ''}"


def with_database(url: str, database: str) -> str:
    """The same server and role, another database (the password kept)."""
    return make_url(url).set(database=database).render_as_string(hide_password=False)


def scratch_name(kind: str) -> str:
    """A fresh database name, `yuji_<kind>_<random>`, so a leftover is recognisable."""
    return f"yuji_{kind}_{secrets.token_hex(6)}"


@asynccontextmanager
async def connected(url: str, *, autocommit: bool = False) -> AsyncGenerator[AsyncConnection]:
    """One connection to `url`; failing to connect is a `StorageError` naming the server."""
    options = {"isolation_level": "AUTOCOMMIT"} if autocommit else {}
    engine = create_async_engine(
        url, poolclass=NullPool, connect_args={"timeout": CONNECT_TIMEOUT_S}, **options
    )
    try:
        try:
            conn = await engine.connect()
        except (DBAPIError, OSError) as exc:
            raise StorageError(refusal(url, exc)) from None
        try:
            yield conn
        finally:
            await conn.close()
    finally:
        await engine.dispose()


def refusal(url: str, exc: BaseException) -> str:
    """The one line for a connection the server (or the network) refused: what went
    wrong and what to change, by the error's SQLSTATE or socket error."""
    parsed = make_url(url)
    user, database = parsed.username or "(none)", parsed.database or ""
    where = label(url)
    code = getattr(exc.orig, "sqlstate", None) if isinstance(exc, DBAPIError) else None
    if code == "28P01":
        return (
            f"PostgreSQL at {where} refused the password of role {user}: "
            "fix the user or password in YUJI_DATABASE_URL"
        )
    if code == "28000":
        return (
            f"PostgreSQL at {where} refused role {user} ({_words(exc)}): fix the user in "
            "YUJI_DATABASE_URL, or let the role log in (CREATE ROLE ... LOGIN, pg_hba.conf)"
        )
    if code == "3D000":
        return (
            f"database {database} does not exist on the PostgreSQL server at "
            f"{where.rsplit('/', 1)[0]}: create it (createdb -O {user} {database}) or fix "
            "the database name in YUJI_DATABASE_URL"
        )
    if isinstance(exc, socket.gaierror):
        return (
            f"cannot reach PostgreSQL at {where}: no host named {parsed.host}; "
            "fix the host in YUJI_DATABASE_URL"
        )
    if isinstance(exc, OSError):  # refused, no such socket, timed out, unroutable
        why = "timed out" if isinstance(exc, TimeoutError) else "nothing answers there"
        return (
            f"cannot reach PostgreSQL at {where} ({why}): start the server, or fix the "
            "host and port in YUJI_DATABASE_URL"
        )
    return f"cannot connect to PostgreSQL at {where}: {_words(exc)}"


async def server_info(conn: AsyncConnection) -> ServerInfo:
    row = (
        await conn.execute(
            text(
                "SELECT current_setting('server_version_num')::int, "
                "current_setting('server_version')"
            )
        )
    ).one()
    return ServerInfo(version_num=int(row[0]), version=str(row[1]).split(" ")[0])


async def check_can_run(conn: AsyncConnection, url: str, head: str | None) -> ServerInfo:
    """Refuse, in one line, a server too old for yuji or, when the schema is not at
    `head` yet, a role that cannot build it (before a migration half-runs and fails
    on its first CREATE). A store already at head runs with a role that only reads
    and writes rows."""
    info = await server_info(conn)
    old = too_old(info, url)
    if old is not None:
        raise ConfigError(old)
    if head is not None and await schema_revision(conn) == head:
        return info
    row = (
        await conn.execute(
            text(
                "SELECT current_user, current_schema(), "
                "coalesce(has_schema_privilege(current_schema(), 'CREATE'), false)"
            )
        )
    ).one()
    user, schema, can_create = str(row[0]), row[1], bool(row[2])
    if schema is None:
        raise ConfigError(
            f"role {user} at {label(url)} has no schema to create yuji's tables in "
            "(search_path names none it can use)"
        )
    if not can_create:
        raise ConfigError(
            f"role {user} may not CREATE in schema {schema} of {label(url)}: "
            f"GRANT CREATE ON SCHEMA {schema} TO {user} (or make the role own the database)"
        )
    return info


def too_old(info: ServerInfo, url: str) -> str | None:
    """Pure: the line refusing a server older than yuji supports, or None."""
    if info.version_num >= MIN_SERVER_VERSION:
        return None
    return f"PostgreSQL {info.version} at {label(url)} is too old: yuji needs 14 or newer"


async def database_size(conn: AsyncConnection) -> int:
    return int(
        (await conn.execute(text("SELECT pg_database_size(current_database())"))).scalar_one()
    )


async def count_rows(conn: AsyncConnection, tables: Sequence[str]) -> dict[str, int]:
    return {
        table: int((await conn.execute(text(f'SELECT count(*) FROM "{table}"'))).scalar_one())
        for table in tables
    }


async def schema_revision(conn: AsyncConnection) -> str | None:
    exists = (await conn.execute(text("SELECT to_regclass('alembic_version')"))).scalar_one()
    if exists is None:
        return None
    value = (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalar()
    return None if value is None else str(value)


async def user_relations(conn: AsyncConnection) -> int:
    """Tables, views, sequences and types the database holds outside the system schemas."""
    query = text(
        "SELECT (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') "
        "        AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%') "
        "     + (SELECT count(*) FROM pg_extension WHERE extname <> 'plpgsql')"
    )
    return int((await conn.execute(query)).scalar_one())


@asynccontextmanager
async def exported_snapshot(
    url: str, tables: Sequence[str]
) -> AsyncGenerator[tuple[str, dict[str, int]]]:
    """A snapshot `pg_dump --snapshot` can dump, and the rows of `tables` in it: the
    live counts at the backup, read in the very snapshot the dump sees. Held open
    until the block ends (the snapshot lives as long as its transaction)."""
    async with connected(url) as conn:
        await conn.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        snapshot = str((await conn.execute(text("SELECT pg_export_snapshot()"))).scalar_one())
        counts = await count_rows(conn, tables)
        try:
            yield snapshot, counts
        finally:
            await conn.rollback()


async def create_database(url: str, name: str) -> None:
    """CREATE DATABASE `name` on the server of `url` (the role needs CREATEDB)."""
    _check_name(name)
    async with connected(url, autocommit=True) as conn:
        try:
            await conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        except DBAPIError as exc:
            raise StorageError(
                f"cannot create database {name} on {label(url)}: {_words(exc)}"
            ) from None


async def drop_database(url: str, name: str) -> None:
    """DROP DATABASE `name` (if it exists), closing whatever is still connected to it."""
    _check_name(name)
    async with connected(url, autocommit=True) as conn:
        try:
            await conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        except DBAPIError as exc:
            raise StorageError(
                f"cannot drop database {name} on {label(url)}: {_words(exc)}"
            ) from None


@asynccontextmanager
async def scratch_database(url: str, kind: str) -> AsyncGenerator[str]:
    """A new empty database on the server of `url`, dropped when the block ends (also
    when it fails); yields its URL."""
    name = scratch_name(kind)
    if not make_url(url).database:  # a URL naming only the server
        url = with_database(url, "postgres")
    await create_database(url, name)
    try:
        yield with_database(url, name)
    finally:
        await drop_database(url, name)


def _check_name(name: str) -> None:
    # Names are spliced into CREATE/DROP (no parameters there): only our own shapes.
    if not name.replace("_", "").isalnum() or not name.isascii():
        raise StorageError(f"not a database name yuji makes: {name!r}")


def _words(exc: BaseException) -> str:
    inner = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    return str(inner).strip().splitlines()[0] if str(inner).strip() else type(inner).__name__
