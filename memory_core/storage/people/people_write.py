"""The person index's two upserts: the persons a batch of messages saw, then their
names in each chat. Two statements per batch whatever its size, where the engines
differ: PostgreSQL takes one array a column (`unnest`, one statement text for every
batch size, so the server prepares it once per connection), SQLite a VALUES list.

Each merge is order-free (earliest first sighting, latest last sighting, the bot mark
kept once set, the name as written at the latest sighting, ties to the greater
spelling by code point), so batches may arrive in any order, twice, or split
differently, and the index comes out the same: the writer's and the rebuild's agree.
The rows go in sorted by their key: two transactions of different chats that meet on
one person (PostgreSQL runs them side by side) lock it in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Table, bindparam, case, select, text, tuple_
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.expression import Executable

from memory_core.storage.schema import person_names, persons
from memory_core.types import NameSource

SQLITE_ROWS = 500
"""Rows per SQLite statement (8 parameters each, far under its limit)."""


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


async def upsert_persons(
    conn: AsyncConnection, seen: Sequence[PersonSeen]
) -> dict[tuple[str, str], int]:
    """(platform, user_id) -> person id, for every one of `seen` (distinct keys)."""
    rows = sorted(seen, key=lambda p: (p.platform, p.user_id))
    if not rows:
        return {}
    if conn.dialect.name == "postgresql":
        columns = {c: [getattr(r, c) for r in rows] for c in _PERSON_COLUMNS}
        result = (await conn.execute(_PG_PERSONS, columns)).all()
    else:
        result = []
        for start in range(0, len(rows), SQLITE_ROWS):
            part = rows[start : start + SQLITE_ROWS]
            values = [{c: getattr(r, c) for c in _PERSON_COLUMNS} for r in part]
            result += (await conn.execute(_sqlite_persons(values))).all()
    return {(str(r.platform), str(r.user_id)): int(r.id) for r in result}


async def upsert_names(
    conn: AsyncConnection, seen: Sequence[NameSeen], ids: dict[tuple[str, str], int]
) -> None:
    """`seen` (distinct (person, scope, normalised, source) keys) under the persons' ids
    (`ids`, else those already indexed; a name of a person never indexed is left out)."""
    missing = {(n.platform, n.user_id) for n in seen} - ids.keys()
    if missing:
        ids = {**ids, **await _indexed(conn, missing)}
        seen = [n for n in seen if (n.platform, n.user_id) in ids]
    rows = sorted(
        (
            {
                "person_id": ids[(n.platform, n.user_id)],
                **{c: getattr(n, c) for c in _NAME_COLUMNS[1:]},
            }
            for n in seen
        ),
        key=lambda r: (r["person_id"], r["scope"], r["normalised"], r["source"]),
    )
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        await conn.execute(_PG_NAMES, {c: [r[c] for r in rows] for c in _NAME_COLUMNS})
        return
    for start in range(0, len(rows), SQLITE_ROWS):
        await conn.execute(_sqlite_names(rows[start : start + SQLITE_ROWS]))


async def _indexed(conn: AsyncConnection, keys: set[tuple[str, str]]) -> dict[tuple[str, str], int]:
    p = persons.c
    found: dict[tuple[str, str], int] = {}
    ordered = sorted(keys)
    for start in range(0, len(ordered), SQLITE_ROWS):
        result = await conn.execute(
            select(p.id, p.platform, p.user_id).where(
                tuple_(p.platform, p.user_id).in_(ordered[start : start + SQLITE_ROWS])
            )
        )
        found.update({(str(r.platform), str(r.user_id)): int(r.id) for r in result})
    return found


_PERSON_COLUMNS = ("platform", "user_id", "is_bot", "first_seen", "last_seen")
_NAME_COLUMNS = (
    "person_id",
    "scope",
    "name",
    "normalised",
    "source",
    "first_seen",
    "last_seen",
)


def _sqlite_persons(values: list[dict[str, Any]]) -> Executable:
    p = persons.c
    statement = sqlite.insert(persons).values(values)
    new = statement.excluded
    return statement.on_conflict_do_update(
        index_elements=[p.platform, p.user_id],
        set_={
            "is_bot": p.is_bot | new.is_bot,
            "first_seen": case((new.first_seen < p.first_seen, new.first_seen), else_=p.first_seen),
            "last_seen": case((new.last_seen > p.last_seen, new.last_seen), else_=p.last_seen),
        },
    ).returning(p.id, p.platform, p.user_id)


def _sqlite_names(values: list[dict[str, Any]]) -> sqlite.Insert:
    n = person_names.c
    statement = sqlite.insert(person_names).values(values)
    new = statement.excluded
    # SQLite compares text by its UTF-8 bytes: code point order, as the merge in Python.
    later = (new.last_seen > n.last_seen) | ((new.last_seen == n.last_seen) & (new.name > n.name))
    return statement.on_conflict_do_update(
        index_elements=[n.person_id, n.scope, n.normalised, n.source],
        set_={
            "name": case((later, new.name), else_=n.name),
            "first_seen": case((new.first_seen < n.first_seen, new.first_seen), else_=n.first_seen),
            "last_seen": case((new.last_seen > n.last_seen, new.last_seen), else_=n.last_seen),
        },
    )


def _pg_unnest(table: Table, columns: Sequence[str]) -> str:
    return ", ".join(
        f"CAST(:{c} AS {table.c[c].type.compile(dialect=postgresql.dialect())}[])" for c in columns
    )


def _pg_arrays(table: Table, columns: Sequence[str]) -> list[Any]:
    return [bindparam(c, type_=postgresql.ARRAY(table.c[c].type, dimensions=1)) for c in columns]


_PG_PERSONS = text(
    f"INSERT INTO persons ({', '.join(_PERSON_COLUMNS)}) "
    f"SELECT * FROM unnest({_pg_unnest(persons, _PERSON_COLUMNS)}) "
    "ON CONFLICT (platform, user_id) DO UPDATE SET "
    "is_bot = persons.is_bot OR excluded.is_bot, "
    "first_seen = LEAST(persons.first_seen, excluded.first_seen), "
    "last_seen = GREATEST(persons.last_seen, excluded.last_seen) "
    "RETURNING id, platform, user_id"
).bindparams(*_pg_arrays(persons, _PERSON_COLUMNS))

_PG_NAMES = text(
    f"INSERT INTO person_names ({', '.join(_NAME_COLUMNS)}) "
    f"SELECT * FROM unnest({_pg_unnest(person_names, _NAME_COLUMNS)}) "
    "ON CONFLICT (person_id, scope, normalised, source) DO UPDATE SET "
    # "C": code point order, whatever the database's collation (as the merge in Python).
    "name = CASE WHEN excluded.last_seen > person_names.last_seen "
    "OR (excluded.last_seen = person_names.last_seen "
    'AND excluded.name COLLATE "C" > person_names.name COLLATE "C") '
    "THEN excluded.name ELSE person_names.name END, "
    "first_seen = LEAST(person_names.first_seen, excluded.first_seen), "
    "last_seen = GREATEST(person_names.last_seen, excluded.last_seen)"
).bindparams(*_pg_arrays(person_names, _NAME_COLUMNS))
