"""The person index's SQL (memory_core/people/ decides what goes in): `persons`, their
`person_names` per chat, and the rebuild's `people_progress`.

Derived data: everything here can be rebuilt from the archive and the aliases table.
`record` writes in the caller's transaction: the archive writer's, which writes its
batch again without the index when the index refuses its part (the rebuild fills it
later). It
also reads the aliases table, which the rebuild folds in, and forgets a person's own
names in a chat for `forget_person` (their archived names are blanked there too), and
walks the archive for the rebuild (storage/archive/heard.py).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import bindparam, delete, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.archive import heard
from memory_core.storage.archive.heard import Heard
from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import aliases, people_progress, person_names, persons
from memory_core.types import NameSource

from .people_write import NameSeen, PersonSeen, upsert_batch

REBUILD = "rebuild"
"""The job name of `yuji people rebuild`'s progress row."""


@dataclass(frozen=True, slots=True)
class Person:
    id: int
    platform: str
    user_id: str
    is_bot: bool
    first_seen: datetime
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class PersonName:
    person_id: int
    scope: str
    name: str
    normalised: str
    source: NameSource
    first_seen: datetime
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class ChatPerson:
    person: Person
    names: tuple[PersonName, ...]
    """Latest first."""


@dataclass(frozen=True, slots=True)
class AliasRow:
    scope: str
    alias: str
    canonical: str
    created_at: datetime


_p, _n = persons.c, person_names.c
_CHUNK = 500
"""Names per IN list (SQLite allows 32,766 bound values; PostgreSQL 65,535)."""


class PeopleRepo(Repository):
    # --- writes ----------------------------------------------------------------------

    async def record(
        self,
        seen_persons: Sequence[PersonSeen],
        seen_names: Sequence[NameSeen],
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        """Upsert what a batch saw: two statements whatever its size (a name's person
        is found by its key, so it may be one indexed before, as an alias's is; a name
        of a person never indexed is left out). A failure is raised; on PostgreSQL the
        caller's transaction is then over (the archive writer writes its batch again
        without the index: memory_core/archive/service.py)."""
        if not seen_persons and not seen_names:
            return
        async with self.writing(conn) as conn:
            await upsert_batch(conn, seen_persons, seen_names)

    async def forget_names(
        self, scope: str, platform: str, user_id: str, *, conn: AsyncConnection | None = None
    ) -> None:
        """The names this person gave themselves in this chat (cards, nicknames) and the
        aliases folded onto them; others' @-mentions of them stay, as their messages do."""
        async with self.writing(conn) as conn:
            await conn.execute(
                delete(person_names).where(
                    _n.scope == scope,
                    _n.source != "mention",
                    _n.person_id.in_(
                        select(_p.id).where(_p.platform == platform, _p.user_id == user_id)
                    ),
                )
            )

    async def clear(self, *, conn: AsyncConnection | None = None) -> None:
        """Empty the index and the rebuild's progress (a rebuild from the start)."""
        async with self.writing(conn) as conn:
            for table in (person_names, persons, people_progress):
                await conn.execute(delete(table))

    async def advance(
        self, last_id: int, at: datetime, *, conn: AsyncConnection | None = None
    ) -> None:
        """The rebuild indexed the archive up to `last_id`."""
        pp = people_progress.c
        async with self.writing(conn) as conn:
            await conn.execute(
                upsert(conn, people_progress)
                .values(job=REBUILD, last_id=last_id, updated_at=at)
                .on_conflict_do_update(
                    index_elements=[pp.job], set_={"last_id": last_id, "updated_at": at}
                )
            )

    # --- reads -----------------------------------------------------------------------

    async def progress(self, *, conn: AsyncConnection | None = None) -> int:
        """The last archive id the rebuild indexed (0: it never ran)."""
        pp = people_progress.c
        async with self.reading(conn) as conn:
            value = await conn.scalar(select(pp.last_id).where(pp.job == REBUILD))
        return int(value or 0)

    async def person_of(
        self, platform: str, user_id: str, *, conn: AsyncConnection | None = None
    ) -> Person | None:
        async with self.reading(conn) as conn:
            row = (
                await conn.execute(_PERSON_OF, {"platform": platform, "user_id": user_id})
            ).first()
        return None if row is None else _person(row)

    async def names_of(
        self, scope: str, person_id: int, *, conn: AsyncConnection | None = None
    ) -> list[PersonName]:
        """Every name the person went by in this chat, latest first."""
        async with self.reading(conn) as conn:
            rows = await conn.execute(_NAMES_OF, {"person_id": person_id, "scope": scope})
            return [_name(r) for r in rows]

    async def who(
        self, scope: str, normalised: str, *, conn: AsyncConnection | None = None
    ) -> list[Person]:
        """The persons who answer to this (normalised) name in this chat, the one seen
        last first: one lookup on (scope, normalised), then each person by its key."""
        async with self.reading(conn) as conn:
            rows = await conn.execute(_WHO, {"scope": scope, "normalised": normalised})
            return [_person(r) for r in rows]

    async def mentioned(
        self,
        scope: str,
        platform: str,
        user_ids: Collection[str],
        *,
        conn: AsyncConnection | None = None,
    ) -> list[ChatPerson]:
        """The persons of these user ids on `platform` the index knows, each with their
        names in this chat, latest first (none: the index never heard them named
        there); one statement along the persons' key and the names' (person, scope)."""
        wanted = sorted(set(user_ids))
        if not wanted:
            return []
        async with self.reading(conn) as conn:
            rows = (
                await conn.execute(
                    select(persons, person_names)
                    .outerjoin(person_names, (_n.person_id == _p.id) & (_n.scope == scope))
                    .where(_p.platform == platform, _p.user_id.in_(wanted[:_CHUNK]))
                    .order_by(_p.user_id, _n.last_seen.desc(), _n.id)
                )
            ).all()
        found: dict[int, tuple[Person, list[PersonName]]] = {}
        for row in rows:
            mapping = row._mapping  # pyright: ignore[reportPrivateUsage]
            person = found.setdefault(int(mapping[_p.id]), (_person_of(mapping), []))
            if mapping[_n.id] is not None:
                person[1].append(_name(row))
        return [ChatPerson(person, tuple(names)) for person, names in found.values()]

    async def named_elsewhere(
        self, scope: str, normalised: Collection[str], *, conn: AsyncConnection | None = None
    ) -> set[str]:
        """Which of these (normalised) names someone goes by in a chat other than
        `scope`: only the names, never who (a memory's subject of no one here is then
        someone, not a thing: memory_core/people/subjects.py)."""
        wanted = sorted(set(normalised))
        found: set[str] = set()
        async with self.reading(conn) as conn:
            for start in range(0, len(wanted), _CHUNK):
                rows = await conn.execute(
                    select(_n.normalised)
                    .where(_n.scope != scope, _n.normalised.in_(wanted[start : start + _CHUNK]))
                    .distinct()
                )
                found.update(str(r[0]) for r in rows)
        return found

    async def bots(self, *, conn: AsyncConnection | None = None) -> list[Person]:
        """The deployment's accounts the index has seen."""
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(persons).where(_p.is_bot.is_(True)).order_by(_p.platform, _p.user_id)
            )
            return [_person(r) for r in rows]

    async def in_chat(self, scope: str, *, conn: AsyncConnection | None = None) -> list[ChatPerson]:
        """Everyone with a name in this chat, the one seen there last first."""
        async with self.reading(conn) as conn:
            rows = (
                await conn.execute(
                    select(person_names, persons)
                    .join(persons, _p.id == _n.person_id)
                    .where(_n.scope == scope)
                    .order_by(_n.last_seen.desc(), _n.id)
                )
            ).all()
        found: dict[int, tuple[Person, list[PersonName]]] = {}
        for row in rows:
            mapping = row._mapping  # pyright: ignore[reportPrivateUsage]
            person = found.setdefault(int(mapping[_p.id]), (_person_of(mapping), []))
            person[1].append(_name(row))
        return [ChatPerson(person, tuple(names)) for person, names in found.values()]

    async def heard_after(
        self, after_id: int, limit: int, *, conn: AsyncConnection | None = None
    ) -> list[Heard]:
        """The archive's messages above `after_id`, ids ascending (the rebuild's walk)."""
        async with self.reading(conn) as conn:
            return await heard.heard_after(conn, after_id, limit)

    async def archive_end(self, *, conn: AsyncConnection | None = None) -> int:
        """The archive's highest id (where the rebuild's walk ends for now)."""
        async with self.reading(conn) as conn:
            return await heard.last_id(conn)

    async def aliases(self, *, conn: AsyncConnection | None = None) -> list[AliasRow]:
        """The aliases table (memories' `add_alias`), which the rebuild folds in."""
        a = aliases.c
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(a.scope, a.alias, a.canonical, a.created_at).order_by(a.scope, a.id)
            )
            return [
                AliasRow(str(r.scope), str(r.alias), str(r.canonical), r.created_at) for r in rows
            ]

    async def counts(self, *, conn: AsyncConnection | None = None) -> tuple[int, int]:
        """(persons, names) in the index."""
        async with self.reading(conn) as conn:
            people = await conn.scalar(select(func.count()).select_from(persons))
            names = await conn.scalar(select(func.count()).select_from(person_names))
        return int(people or 0), int(names or 0)


# The lookups recall will make on every wake, built once: a statement built per call
# cost as much again as the query (0.6 against 0.3 ms).
_PERSON_OF = select(persons).where(
    _p.platform == bindparam("platform"), _p.user_id == bindparam("user_id")
)
_NAMES_OF = (
    select(person_names)
    .where(_n.person_id == bindparam("person_id"), _n.scope == bindparam("scope"))
    .order_by(_n.last_seen.desc(), _n.id)
)
_WHO = (
    select(persons)
    .where(
        _p.id.in_(
            select(_n.person_id)
            .where(_n.scope == bindparam("scope"), _n.normalised == bindparam("normalised"))
            .distinct()
        )
    )
    .order_by(_p.last_seen.desc(), _p.id)
)


def _person(row: Any) -> Person:
    return Person(
        id=int(row.id),
        platform=str(row.platform),
        user_id=str(row.user_id),
        is_bot=bool(row.is_bot),
        first_seen=row.first_seen,
        last_seen=row.last_seen,
    )


def _person_of(mapping: Any) -> Person:
    return Person(
        id=int(mapping[_p.id]),
        platform=str(mapping[_p.platform]),
        user_id=str(mapping[_p.user_id]),
        is_bot=bool(mapping[_p.is_bot]),
        first_seen=mapping[_p.first_seen],
        last_seen=mapping[_p.last_seen],
    )


def _name(row: Any) -> PersonName:
    mapping = row._mapping
    return PersonName(
        person_id=int(mapping[_n.person_id]),
        scope=str(mapping[_n.scope]),
        name=str(mapping[_n.name]),
        normalised=str(mapping[_n.normalised]),
        source=cast(NameSource, mapping[_n.source]),
        first_seen=mapping[_n.first_seen],
        last_seen=mapping[_n.last_seen],
    )
