"""The SQL of `yuji copy-store` (porting/copy_store.py runs it): every table of the
schema read in primary-key chunks from one store and written into another, each chunk
in one transaction with its `copy_progress` row; the rows of every table in either
store; the checksums the two stores are compared by; and the id sequences, the one
place where the two dialects differ.

Only the tables of schema.py are copied. The full-text tables (`DERIVED_PREFIXES`)
are derived and rebuilt on the target instead; `copy_progress` is the target's own bookkeeping.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Table,
    func,
    insert,
    inspect,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.errors import StorageError, StorageUnavailable
from memory_core.storage.engine import Database
from memory_core.storage.schema import copy_progress, experiences, memories, metadata

RUNTIME = frozenset({"leadership", "wake_claims", "bot_accounts"})
"""The running processes' own state (who leads, which wakes were claimed, which
accounts are online): the source deployment's, never the copy's."""
COPIED: tuple[Table, ...] = tuple(
    t for t in metadata.sorted_tables if t is not copy_progress and t.name not in RUNTIME
)
"""Every table of the schema but those, each after the tables its foreign keys point at."""
DERIVED_PREFIXES = ("memory_fts", "message_fts", "fts_totals")
"""The full-text tables and what each engine keeps beside them (FTS5's shadow tables,
PostgreSQL's vocabularies and totals; migrations 0001 and 0016): rebuilt, not copied."""
NOT_ROWS = frozenset({"alembic_version", copy_progress.name})
"""Tables whose rows never make a store "not empty": the schema's revision, and the
copy's own bookkeeping."""
Key = tuple[Any, ...]
p = copy_progress.c


def store_name(url: str) -> str:
    """How a store is named in the target's bookkeeping and in messages: its URL
    without a password, a SQLite file by its absolute path."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        parsed = parsed.set(database=str(Path(parsed.database or "").resolve()))
    return parsed.render_as_string(hide_password=True)


@dataclass(frozen=True, slots=True)
class TableProgress:
    table: str
    source: str
    last_key: Key | None
    """The primary key of the last row copied (None: none yet)."""
    copied: int
    done: bool


async def row_counts(conn: AsyncConnection, *, derived: bool = False) -> dict[str, int]:
    """Rows of every table the database holds (the schema's and any other), but for
    `NOT_ROWS` and, unless `derived`, the full-text tables."""
    names = await conn.run_sync(lambda c: inspect(c).get_table_names())
    counts: dict[str, int] = {}
    for name in sorted(names):
        if name in NOT_ROWS or name.startswith("sqlite_"):
            continue
        if not derived and name.startswith(DERIVED_PREFIXES):
            continue
        table = metadata.tables.get(name)
        if table is not None:
            counts[name] = (
                await conn.execute(select(func.count()).select_from(table))
            ).scalar_one()
        else:  # not ours: its name comes from the database's own catalogue
            quoted = conn.dialect.identifier_preparer.quote(name)
            counts[name] = (await conn.execute(text(f"SELECT count(*) FROM {quoted}"))).scalar_one()
    return counts


async def looked_at(db: Database) -> tuple[list[TableProgress], dict[str, int]]:
    """What an earlier copy recorded in the target, and its rows by table: the first
    time the copy reaches it, so a store that cannot be reached is one line."""
    try:
        async with db.read() as conn:
            return await read_progress(conn), await row_counts(conn)
    except DBAPIError as exc:
        if exc.connection_invalidated or _at_connect(exc):
            raise StorageError(f"cannot open {store_name(db.url)}: {exc.orig}") from None
        raise
    except OSError as exc:  # no server at that address
        raise StorageError(f"cannot open {store_name(db.url)}: {exc.strerror or exc}") from None
    except StorageUnavailable as exc:  # the engine's translation of the two above
        raise StorageError(f"cannot open {store_name(db.url)}: {exc.args[0]}") from None


def _at_connect(exc: DBAPIError) -> bool:
    # A failure to connect carries no statement: the server said no before any was sent.
    return exc.statement is None


async def read_progress(conn: AsyncConnection) -> list[TableProgress]:
    """What an earlier copy into this store recorded (nothing before migration 0017)."""
    if not await conn.run_sync(lambda c: inspect(c).has_table(copy_progress.name)):
        return []
    rows = (await conn.execute(select(copy_progress).order_by(p.table_name))).all()
    return [
        TableProgress(
            r.table_name,
            r.source,
            tuple(r.last_key) if r.last_key is not None else None,
            r.copied,
            r.done,
        )
        for r in rows
    ]


async def start_progress(
    conn: AsyncConnection, source: str, tables: Sequence[str], now: datetime
) -> None:
    """Claim this store for a copy of `source`: one row per table, nothing copied yet."""
    await conn.execute(
        insert(copy_progress),
        [
            {
                "table_name": name,
                "source": source,
                "last_key": None,
                "copied": 0,
                "done": False,
                "updated_at": now,
            }
            for name in tables
        ],
    )


def _after(table: Table, last_key: Key) -> ColumnElement[bool]:
    key = list(table.primary_key.columns)
    if len(key) == 1:
        return key[0] > last_key[0]
    return tuple_(*key) > tuple_(*last_key)


async def read_chunk(
    conn: AsyncConnection, table: Table, last_key: Key | None, limit: int
) -> list[dict[str, Any]]:
    """The next `limit` rows of `table` after `last_key`, in primary-key order."""
    query = select(table).order_by(*table.primary_key.columns).limit(limit)
    if last_key is not None:
        query = query.where(_after(table, last_key))
    return [dict(row) for row in (await conn.execute(query)).mappings()]


def key_of(table: Table, row: Mapping[str, Any]) -> Key:
    return tuple(row[column.name] for column in table.primary_key.columns)


async def write_chunk(
    conn: AsyncConnection,
    table: Table,
    rows: Sequence[Mapping[str, Any]],
    *,
    done: bool,
    now: datetime,
) -> None:
    """Insert `rows` (ids as they are) and move the table's progress past them, in the
    caller's transaction: a chunk is there with its progress, or neither is."""
    values: dict[str, Any] = {"done": done, "updated_at": now}
    if rows:
        await conn.execute(insert(table), list(rows))
        values |= {"last_key": list(key_of(table, rows[-1])), "copied": p.copied + len(rows)}
    await conn.execute(update(copy_progress).where(p.table_name == table.name).values(values))


# --- id sequences ------------------------------------------------------------------


def _serial(table: Table) -> str | None:
    """The column a database numbers itself in `table`, if any."""
    column = table.autoincrement_column
    return column.name if column is not None else None


async def sequence_positions(conn: AsyncConnection) -> dict[str, int]:
    """The last id each table's sequence handed out (may exceed the largest id there:
    rows deleted since), where the database keeps one."""
    if conn.dialect.name == "sqlite":
        if not await conn.run_sync(lambda c: inspect(c).has_table("sqlite_sequence")):
            return {}
        rows = (await conn.execute(text("SELECT name, seq FROM sqlite_sequence"))).all()
        return {str(name): int(seq) for name, seq in rows}
    positions: dict[str, int] = {}
    for table in COPIED:
        column = _serial(table)
        if column is None:
            continue
        last = (
            await conn.execute(
                text("SELECT pg_sequence_last_value(pg_get_serial_sequence(:t, :c)::regclass)"),
                {"t": table.name, "c": column},
            )
        ).scalar_one()
        if last is not None:
            positions[table.name] = int(last)
    return positions


async def advance_sequences(conn: AsyncConnection, source: Mapping[str, int]) -> None:
    """Make every table of the target number new rows after both its largest id and the
    source's sequence, so no id the source ever handed out is handed out again.

    PostgreSQL's sequences do not see explicit ids, so each is set here. SQLite numbers
    a table past its largest id by itself, and an AUTOINCREMENT table's `sqlite_sequence`
    row follows explicit ids too; only a source sequence ahead of that is carried over."""
    for table in COPIED:
        column = _serial(table)
        if column is None:
            continue
        largest = (await conn.execute(select(func.max(table.c[column])))).scalar_one() or 0
        position = max(largest, source.get(table.name, 0))
        if conn.dialect.name == "sqlite":
            if table.dialect_options["sqlite"]["autoincrement"] and position > largest:
                await _sqlite_sequence_at_least(conn, table.name, position)
        elif position > 0:
            await conn.execute(
                text("SELECT setval(pg_get_serial_sequence(:t, :c), :v)"),
                {"t": table.name, "c": column, "v": position},
            )


async def _sqlite_sequence_at_least(conn: AsyncConnection, name: str, position: int) -> None:
    moved = await conn.execute(
        text("UPDATE sqlite_sequence SET seq = :v WHERE name = :t AND seq < :v"),
        {"t": name, "v": position},
    )
    if moved.rowcount == 0:
        await conn.execute(
            text(
                "INSERT INTO sqlite_sequence(name, seq) SELECT :t, :v "
                "WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = :t)"
            ),
            {"t": name, "v": position},
        )


# --- checksums ----------------------------------------------------------------------

CHECKSUMS: dict[str, tuple[Table, tuple[str, ...]]] = {
    "archive (id, text)": (experiences, ("id", "text")),
    "memories (id, version, content)": (memories, ("id", "version", "content")),
}
"""What the two stores are compared by beyond row counts: the truth a reader sees."""
_CHECKSUM_CHUNK = 5000


async def checksums(conn: AsyncConnection) -> dict[str, str]:
    """SHA-256 over each `CHECKSUMS` entry's columns, row by row in id order."""
    found: dict[str, str] = {}
    for label, (table, names) in CHECKSUMS.items():
        digest = hashlib.sha256()
        columns = [table.c[name] for name in names]
        last = 0
        while True:
            rows = (
                await conn.execute(
                    select(*columns)
                    .where(table.c.id > last)
                    .order_by(table.c.id)
                    .limit(_CHECKSUM_CHUNK)
                )
            ).all()
            if not rows:
                break
            for row in rows:
                digest.update("\x1f".join(str(v) for v in row).encode("utf-8") + b"\x1e")
            last = rows[-1].id
        found[label] = digest.hexdigest()
    return found
