"""The person index's two upserts: the persons a batch of messages saw, then their
names in each chat, each name under its person's id found by (platform, user id) in
the same statement. Two statements per batch whatever its size, and each a fixed
text, so nothing is compiled per batch (a VALUES list of each length was, at several
ms a batch): PostgreSQL takes one array a column (`unnest`, prepared once per
connection), SQLite one parameter row per person or name (`executemany`).

Each merge is order-free (earliest first sighting, latest last sighting, the bot mark
kept once set, the name as written at the latest sighting, ties to the greater
spelling by code point), so batches may arrive in any order, twice, or split
differently, and the index comes out the same: the writer's and the rebuild's agree.
On PostgreSQL the persons go in sorted by their key: two transactions of different
chats that meet on one person (it runs them side by side) lock it in the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Table, bindparam, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.schema import person_names, persons
from memory_core.types import NameSource


@dataclass(frozen=True, slots=True)
class PersonSeen:
    platform: str
    user_id: str
    is_bot: bool
    first_seen: datetime
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class NameSeen:
    platform: str
    user_id: str
    scope: str
    name: str
    """As written (the latest spelling of this normalised name)."""
    normalised: str
    source: NameSource
    first_seen: datetime
    last_seen: datetime


async def upsert_batch(
    conn: AsyncConnection, seen_persons: Sequence[PersonSeen], seen_names: Sequence[NameSeen]
) -> None:
    """Both upserts in the caller's transaction."""
    await upsert_persons(conn, seen_persons)
    await upsert_names(conn, seen_names)


async def upsert_persons(conn: AsyncConnection, seen: Sequence[PersonSeen]) -> None:
    """`seen` (distinct (platform, user_id) keys) into `persons`."""
    if not seen:
        return
    if conn.dialect.name == "postgresql":
        rows = sorted(seen, key=lambda p: (p.platform, p.user_id))  # one lock order
        await conn.execute(_PG_PERSONS, {c: [getattr(r, c) for r in rows] for c in _PERSON})
        return
    instant = _instant(conn.dialect)
    await conn.exec_driver_sql(
        _SQLITE_PERSONS,
        [
            (r.platform, r.user_id, int(r.is_bot), instant(r.first_seen), instant(r.last_seen))
            for r in seen
        ],
    )


async def upsert_names(conn: AsyncConnection, seen: Sequence[NameSeen]) -> None:
    """`seen` (distinct (person, scope, normalised, source) keys) into `person_names`,
    each under its person's id; a name whose person is not indexed is left out. (Their
    rows belong to the chats the caller holds, so their order locks nothing shared.)"""
    if not seen:
        return
    if conn.dialect.name == "postgresql":
        await conn.execute(_PG_NAMES, {c: [getattr(r, c) for r in seen] for c in _NAME})
        return
    instant = _instant(conn.dialect)
    await conn.exec_driver_sql(
        _SQLITE_NAMES,
        [
            (
                r.scope,
                r.name,
                r.normalised,
                r.source,
                instant(r.first_seen),
                instant(r.last_seen),
                r.platform,
                r.user_id,
            )
            for r in seen
        ],
    )


def _instant(dialect: Dialect) -> Callable[[datetime], Any]:
    """An instant as the schema's column type stores it on this engine (SQLite: the
    text SQLAlchemy writes, which orders as the instants do)."""
    process = persons.c.first_seen.type.dialect_impl(dialect).bind_processor(dialect)
    if process is None:  # pragma: no cover - SQLite's DATETIME always has one
        raise TypeError(f"no bind processor for instants on {dialect.name}")
    done: dict[datetime, Any] = {}  # a batch's sightings share instants (first = last)

    def stored(at: datetime) -> Any:
        value = done.get(at)
        if value is None:
            value = done[at] = process(at)
        return value

    return stored


_PERSON = ("platform", "user_id", "is_bot", "first_seen", "last_seen")
_NAME = (
    "platform",
    "user_id",
    "scope",
    "name",
    "normalised",
    "source",
    "first_seen",
    "last_seen",
)
_NAME_MERGE = (
    "name = CASE WHEN excluded.last_seen > person_names.last_seen "
    "OR (excluded.last_seen = person_names.last_seen "
    "AND excluded.name{c} > person_names.name{c}) "
    "THEN excluded.name ELSE person_names.name END, "
)

_SQLITE_PERSONS = (
    "INSERT INTO persons (platform, user_id, is_bot, first_seen, last_seen) "
    "VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (platform, user_id) DO UPDATE SET "
    "is_bot = persons.is_bot OR excluded.is_bot, "
    "first_seen = min(persons.first_seen, excluded.first_seen), "
    "last_seen = max(persons.last_seen, excluded.last_seen)"
)
_SQLITE_NAMES = (
    # INSERT ... SELECT: no row when the person is not indexed. (The WHERE also keeps
    # SQLite from reading ON CONFLICT as a join's ON.)
    "INSERT INTO person_names "
    "(person_id, scope, name, normalised, source, first_seen, last_seen) "
    "SELECT id, ?, ?, ?, ?, ?, ? FROM persons WHERE platform = ? AND user_id = ? "
    "ON CONFLICT (person_id, scope, normalised, source) DO UPDATE SET "
    # SQLite compares text by its UTF-8 bytes: code point order, as the merge in Python.
    + _NAME_MERGE.format(c="")
    + "first_seen = min(person_names.first_seen, excluded.first_seen), "
    "last_seen = max(person_names.last_seen, excluded.last_seen)"
)


def _pg_unnest(table: Table, columns: Sequence[str]) -> str:
    return ", ".join(
        f"CAST(:{c} AS {table.c[c].type.compile(dialect=postgresql.dialect())}[])" for c in columns
    )


def _pg_arrays(table: Table, columns: Sequence[str]) -> list[Any]:
    return [bindparam(c, type_=postgresql.ARRAY(table.c[c].type, dimensions=1)) for c in columns]


_PG_PERSONS = text(
    f"INSERT INTO persons ({', '.join(_PERSON)}) "
    f"SELECT * FROM unnest({_pg_unnest(persons, _PERSON)}) "
    "ON CONFLICT (platform, user_id) DO UPDATE SET "
    "is_bot = persons.is_bot OR excluded.is_bot, "
    "first_seen = LEAST(persons.first_seen, excluded.first_seen), "
    "last_seen = GREATEST(persons.last_seen, excluded.last_seen)"
).bindparams(*_pg_arrays(persons, _PERSON))

_NAME_VALUES = ("scope", "name", "normalised", "source", "first_seen", "last_seen")
_PG_NAMES = text(
    f"INSERT INTO person_names (person_id, {', '.join(_NAME_VALUES)}) "
    f"SELECT p.id, {', '.join(f'v.{c}' for c in _NAME_VALUES)} "
    f"FROM unnest({_pg_unnest(persons, _PERSON[:2])}, "
    f"{_pg_unnest(person_names, _NAME_VALUES)}) AS v({', '.join(_NAME)}) "
    "JOIN persons AS p ON p.platform = v.platform AND p.user_id = v.user_id "
    "ON CONFLICT (person_id, scope, normalised, source) DO UPDATE SET "
    # "C": code point order, whatever the database's collation (as the merge in Python).
    + _NAME_MERGE.format(c=' COLLATE "C"')
    + "first_seen = LEAST(person_names.first_seen, excluded.first_seen), "
    "last_seen = GREATEST(person_names.last_seen, excluded.last_seen)"
).bindparams(*_pg_arrays(persons, _PERSON[:2]), *_pg_arrays(person_names, _NAME_VALUES))
