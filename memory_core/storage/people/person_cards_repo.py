"""The person cards' SQL (`person_cards`, migration 0028) and the reads that build them
and show them: which members' memories changed in a day, a member's memories with
who said their evidence, and, in one read per reply, what the reply prompt needs of
the people it shows (their current names, their cards, the speakers of the injected
memories' evidence).

A card is one (chat, member): nothing here reads or writes across chats. Versions are
appended, numbered in SQL by the insert itself (as `append_card` numbers the chat
cards), never read first.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Insert,
    String,
    Text,
    and_,
    delete,
    func,
    insert,
    literal,
    select,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.memories.memory_sql import to_memory
from memory_core.storage.repository import Repository
from memory_core.storage.schema import (
    experiences,
    memories,
    memory_evidence,
    memory_versions,
    person_cards,
    person_names,
    persons,
)
from memory_core.storage.types import UTCDateTime
from memory_core.types import Memory, scope_platform

_c, _m, _v, _e = person_cards.c, memories.c, memory_versions.c, memory_evidence.c
_p, _n, _x = persons.c, person_names.c, experiences.c
_CHUNK = 500
"""Values per IN list (well under either engine's limit on bound values)."""


@dataclass(frozen=True, slots=True)
class PersonCard:
    scope: str
    user_id: str
    version: int
    content: str
    day: str | None
    """The night that wrote this version."""
    created_at: datetime


@dataclass(frozen=True, slots=True)
class MemberMemory:
    """A memory about a member, with the senders of its evidence messages (the bot's
    own lines left out), earliest first."""

    memory: Memory
    speakers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PromptPeople:
    """What the reply prompt shows of a chat's people, read in one transaction."""

    named: tuple[str, ...] = ()
    """Members (user ids) going by one of the names the wake's text contains."""
    names: dict[str, str] = field(default_factory=dict[str, str])
    """user id -> the name they went by last in this chat."""
    cards: dict[str, PersonCard] = field(default_factory=dict[str, PersonCard])
    """user id -> their current card in this chat."""
    speakers: dict[int, tuple[str, ...]] = field(default_factory=dict[int, tuple[str, ...]])
    """memory id -> the senders of its evidence messages, earliest first."""


class PersonCardsRepo(Repository):
    # --- cards -------------------------------------------------------------------------

    async def current(
        self, scope: str, user_ids: Collection[str], *, conn: AsyncConnection | None = None
    ) -> dict[str, PersonCard]:
        """The newest card of each of these members in this chat (absent: none yet)."""
        async with self.reading(conn) as conn:
            return await _current(conn, scope, user_ids)

    async def history(
        self, scope: str, user_id: str, *, conn: AsyncConnection | None = None
    ) -> list[PersonCard]:
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(person_cards)
                .where(_c.scope == scope, _c.user_id == user_id)
                .order_by(_c.version)
            )
            return [_card(r) for r in rows]

    async def append(
        self,
        scope: str,
        user_id: str,
        content: str,
        day: str | None,
        at: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        """The member's next card version in this chat."""
        async with self.writing(conn) as conn:
            await conn.execute(append_person_card(scope, user_id, content, day, at))

    async def forget(
        self, scope: str, user_id: str, *, conn: AsyncConnection | None = None
    ) -> None:
        """Every version of the member's card in this chat (a forget request)."""
        async with self.writing(conn) as conn:
            await conn.execute(delete(person_cards).where(_c.scope == scope, _c.user_id == user_id))

    # --- what the nightly step reads -----------------------------------------------------

    async def changed_members(
        self, scope: str, after: datetime, until: datetime, *, conn: AsyncConnection | None = None
    ) -> list[str]:
        """Members of this chat whose memories changed in (after, until]: a version of a
        memory about them was written then. Most changes first."""
        changes = func.count(_v.id)
        query = (
            select(_v.subject_person, changes)
            .join(memories, _m.id == _v.memory_id)
            .where(
                _m.scope == scope,
                _v.changed_at > after,
                _v.changed_at <= until,
                _v.subject_kind == "person",
                _v.subject_person.is_not(None),
            )
            .group_by(_v.subject_person)
            .order_by(changes.desc(), _v.subject_person)
        )
        async with self.reading(conn) as conn:
            return [str(r[0]) for r in await conn.execute(query)]

    async def member_memories(
        self, scope: str, user_id: str, limit: int, *, conn: AsyncConnection | None = None
    ) -> list[MemberMemory]:
        """The member's active memories in this chat that rest on evidence, the most
        recently changed first (at most `limit`), each with its evidence's speakers."""
        has_evidence = select(_e.id).where(_e.memory_id == _m.id).exists()
        query = (
            select(memories)
            .where(
                _m.scope == scope,
                _m.status == "active",
                _m.subject_kind == "person",
                _m.subject_person == user_id,
                has_evidence,
            )
            .order_by(_m.updated_at.desc(), _m.id.desc())
            .limit(limit)
        )
        async with self.reading(conn) as conn:
            found = [to_memory(r) for r in await conn.execute(query)]
            speakers = await _speakers(conn, scope, [m.id for m in found])
        return [MemberMemory(m, speakers.get(m.id, ())) for m in found]

    async def meant(
        self, scope: str, forms: Collection[str], *, conn: AsyncConnection | None = None
    ) -> list[str]:
        """Members (not the bot) these normalised names mean in this chat (`_named`)."""
        async with self.reading(conn) as conn:
            return await _named(conn, scope, forms)

    async def names(
        self, scope: str, user_ids: Collection[str], *, conn: AsyncConnection | None = None
    ) -> dict[str, str]:
        """user id -> the name they went by last in this chat (absent: no name here)."""
        async with self.reading(conn) as conn:
            return await _names(conn, scope, user_ids)

    # --- what a reply reads ------------------------------------------------------------------

    async def prompt_people(
        self,
        scope: str,
        *,
        memory_ids: Sequence[int],
        members: Sequence[str],
        subjects: Sequence[str] = (),
        name_forms: Collection[str] = (),
        conn: AsyncConnection | None = None,
    ) -> PromptPeople:
        """In one read: who goes by one of `name_forms` (normalised spellings the wake's
        text contains), the speakers of the memories' evidence, then the current names
        of everyone involved (`subjects` too) and the cards of `members` and the named."""
        async with self.reading(conn) as conn:
            named = await _named(conn, scope, name_forms) if name_forms else []
            speakers = await _speakers(conn, scope, memory_ids) if memory_ids else {}
            carded = list(dict.fromkeys((*members, *named)))
            everyone = {*carded, *subjects, *(s for said in speakers.values() for s in said)}
            names = await _names(conn, scope, everyone)
            cards = await _current(conn, scope, carded)
        return PromptPeople(tuple(named), names, cards, speakers)


def append_person_card(
    scope: str, user_id: str, content: str, day: str | None, at: datetime
) -> Insert:
    """INSERT of a member's next card version, numbered in SQL (newest + 1)."""
    newest = (
        select(func.coalesce(func.max(_c.version), 0))
        .where(_c.scope == scope, _c.user_id == user_id)
        .scalar_subquery()
    )
    row = select(
        literal(scope, String),
        literal(user_id, String),
        newest + 1,
        literal(content, Text),
        literal(day, String),
        literal(at, UTCDateTime),
    )
    return insert(person_cards).from_select(
        ["scope", "user_id", "version", "content", "day", "created_at"], row
    )


async def _current(
    conn: AsyncConnection, scope: str, user_ids: Collection[str]
) -> dict[str, PersonCard]:
    wanted = sorted(set(user_ids))
    found: dict[str, PersonCard] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        latest = (
            select(_c.user_id, func.max(_c.version).label("version"))
            .where(_c.scope == scope, _c.user_id.in_(chunk))
            .group_by(_c.user_id)
            .subquery()
        )
        rows = await conn.execute(
            select(person_cards).join(
                latest,
                and_(
                    _c.scope == scope,
                    _c.user_id == latest.c.user_id,
                    _c.version == latest.c.version,
                ),
            )
        )
        found.update((str(r.user_id), _card(r)) for r in rows)
    return found


async def _speakers(
    conn: AsyncConnection, scope: str, memory_ids: Sequence[int]
) -> dict[int, tuple[str, ...]]:
    """memory id -> senders of its evidence messages of this chat (not the bot's),
    earliest first, each once."""
    ids = sorted(set(memory_ids))
    found: dict[int, list[str]] = {}
    for start in range(0, len(ids), _CHUNK):
        rows = await conn.execute(
            select(_e.memory_id, _x.sender_id)
            .join(experiences, _x.id == _e.experience_id)
            .where(
                _e.memory_id.in_(ids[start : start + _CHUNK]),
                _x.scope == scope,
                _x.is_bot.is_(False),
            )
            .order_by(_e.memory_id, _x.sent_at, _x.id)
        )
        for memory_id, sender in rows:
            said = found.setdefault(int(memory_id), [])
            if str(sender) not in said:
                said.append(str(sender))
    return {k: tuple(v) for k, v in found.items()}


async def _names(conn: AsyncConnection, scope: str, user_ids: Collection[str]) -> dict[str, str]:
    """user id -> the name they went by last in this chat."""
    return await _last_names(conn, scope, user_ids, _n.name)


async def _last_names(
    conn: AsyncConnection, scope: str, user_ids: Collection[str], column: Any
) -> dict[str, str]:
    """user id -> `column` of the name they went by last in this chat."""
    wanted = sorted(set(user_ids))
    found: dict[str, str] = {}
    platform = scope_platform(scope)
    for start in range(0, len(wanted), _CHUNK):
        rows = await conn.execute(
            select(_p.user_id, column)
            .join(person_names, _n.person_id == _p.id)
            .where(
                _p.platform == platform,
                _p.user_id.in_(wanted[start : start + _CHUNK]),
                _n.scope == scope,
            )
            .order_by(_p.user_id, _n.last_seen.desc(), _n.id)
        )
        for user_id, name in rows:
            found.setdefault(str(user_id), str(name))
    return found


async def _named(conn: AsyncConnection, scope: str, forms: Collection[str]) -> list[str]:
    """Members (not the bot) these normalised names mean in this chat, the one seen last
    first. A name several members went by means whoever goes by it now (their latest
    name here), if only one does, else none of them: as a memory's subject resolves
    (memory_core/people/subjects.py, rule 4), two members sharing a name are never
    guessed."""
    wanted = sorted(set(forms))
    holders: dict[str, set[str]] = {}
    seen: dict[str, Any] = {}
    platform = scope_platform(scope)
    for start in range(0, len(wanted), _CHUNK):
        rows = await conn.execute(
            select(_p.user_id, _n.normalised, func.max(_n.last_seen))
            .join(persons, _p.id == _n.person_id)
            .where(
                _n.scope == scope,
                _n.normalised.in_(wanted[start : start + _CHUNK]),
                _p.platform == platform,
                _p.is_bot.is_(False),
            )
            .group_by(_p.user_id, _n.normalised)
        )
        for user_id, form, last in rows:
            key = str(user_id)
            holders.setdefault(str(form), set()).add(key)
            seen[key] = max(seen[key], last) if key in seen else last
    shared = {u for users in holders.values() if len(users) > 1 for u in users}
    current = await _current_forms(conn, scope, shared) if shared else {}
    meant: set[str] = set()
    for form, users in holders.items():
        if len(users) > 1:
            users = {u for u in users if current.get(u) == form}
        if len(users) == 1:
            meant |= users
    return sorted(meant, key=lambda u: seen[u], reverse=True)


async def _current_forms(
    conn: AsyncConnection, scope: str, user_ids: Collection[str]
) -> dict[str, str]:
    """user id -> the normalised name they went by last in this chat."""
    return await _last_names(conn, scope, user_ids, _n.normalised)


def _card(row: Any) -> PersonCard:
    return PersonCard(
        scope=str(row.scope),
        user_id=str(row.user_id),
        version=int(row.version),
        content=str(row.content),
        day=row.day,
        created_at=row.created_at,
    )
