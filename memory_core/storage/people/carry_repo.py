"""Carrying's SQL (memory_core/people/carrying.py decides what travels): each person's
choices (`carry_choices`), each chat's refusal (`carry_blocks`), who was seen leaving
a chat (`chat_departures`), the chats a person was seen speaking in (the person index)
and the memories that might travel, read by the rule's own filters (a member's own,
said in full by them, current, never forgotten) before the rule checks each again.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, literal, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.clock import as_utc
from memory_core.storage.memories.memory_sql import forgotten, to_memory
from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import (
    carry_blocks,
    carry_choices,
    chat_departures,
    memories,
    memory_relations,
    person_names,
    persons,
)
from memory_core.types import Memory, is_group_scope

SPOKEN_SOURCES = ("card", "nickname")
"""The names a person gave themselves by speaking in a chat (a mention or an alias is
someone else naming them: no sign they are in it)."""
CARRIED_READ = 200
"""At most this many of a person's memories are read for one wake (newest first)."""


@dataclass(frozen=True, slots=True)
class CarryChoice:
    """What a person chose; no row is `CarryChoice()`: private on, groups off."""

    into_private: bool = True
    into_groups: bool = False
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Membership:
    """A chat a person was seen speaking in: when last, and when seen leaving it."""

    scope: str
    last_spoke: datetime
    left_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class CarryBlock:
    scope: str
    blocked_by: str
    created_at: datetime


_c, _b, _d = carry_choices.c, carry_blocks.c, chat_departures.c
_p, _n, _m, _r = persons.c, person_names.c, memories.c, memory_relations.c


class CarryRepo(Repository):
    # --- choices and blocks ------------------------------------------------------------

    async def choice(
        self, platform: str, user_id: str, *, conn: AsyncConnection | None = None
    ) -> CarryChoice:
        async with self.reading(conn) as conn:
            row = (
                await conn.execute(
                    select(carry_choices).where(_c.platform == platform, _c.user_id == user_id)
                )
            ).first()
        if row is None:
            return CarryChoice()
        return CarryChoice(bool(row.into_private), bool(row.into_groups), row.updated_at)

    async def choose(
        self,
        platform: str,
        user_id: str,
        at: datetime,
        *,
        into_private: bool | None = None,
        into_groups: bool | None = None,
        conn: AsyncConnection | None = None,
    ) -> CarryChoice:
        """Set either choice (None: keep it as it is); the choice now."""
        async with self.writing(conn) as conn:
            was = await self.choice(platform, user_id, conn=conn)
            now = CarryChoice(
                was.into_private if into_private is None else into_private,
                was.into_groups if into_groups is None else into_groups,
                at,
            )
            values = {"into_private": now.into_private, "into_groups": now.into_groups}
            await conn.execute(
                upsert(conn, carry_choices)
                .values(platform=platform, user_id=user_id, updated_at=at, **values)
                .on_conflict_do_update(
                    index_elements=[_c.platform, _c.user_id], set_={**values, "updated_at": at}
                )
            )
        return now

    async def block(
        self, scope: str, by: str, at: datetime, *, conn: AsyncConnection | None = None
    ) -> None:
        async with self.writing(conn, (scope,)) as conn:
            await conn.execute(
                upsert(conn, carry_blocks)
                .values(scope=scope, blocked_by=by, created_at=at)
                .on_conflict_do_nothing(index_elements=[_b.scope])
            )

    async def unblock(self, scope: str, *, conn: AsyncConnection | None = None) -> None:
        async with self.writing(conn, (scope,)) as conn:
            await conn.execute(delete(carry_blocks).where(_b.scope == scope))

    async def blocked(
        self, scope: str, *, conn: AsyncConnection | None = None
    ) -> CarryBlock | None:
        async with self.reading(conn) as conn:
            row = (await conn.execute(select(carry_blocks).where(_b.scope == scope))).first()
        return None if row is None else CarryBlock(row.scope, row.blocked_by, row.created_at)

    # --- membership --------------------------------------------------------------------

    async def left(
        self, scope: str, user_id: str, at: datetime, *, conn: AsyncConnection | None = None
    ) -> None:
        """A member was seen leaving `scope` at `at` (the latest leave counts)."""
        async with self.writing(conn, (scope,)) as conn:
            await conn.execute(
                upsert(conn, chat_departures)
                .values(scope=scope, user_id=user_id, left_at=at)
                .on_conflict_do_update(index_elements=[_d.scope, _d.user_id], set_={"left_at": at})
            )

    async def memberships(
        self, platform: str, user_id: str, *, conn: AsyncConnection | None = None
    ) -> list[Membership]:
        """Every chat the person was seen speaking in (the person index), with their
        last words there and when they were seen leaving, if ever."""
        spoke = (
            select(_n.scope, func.max(_n.last_seen).label("last_spoke"))
            .join(persons, _p.id == _n.person_id)
            .where(
                _p.platform == platform,
                _p.user_id == user_id,
                _n.source.in_(SPOKEN_SOURCES),
            )
            .group_by(_n.scope)
            .subquery()
        )
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(spoke.c.scope, spoke.c.last_spoke, _d.left_at)
                .outerjoin(chat_departures, (_d.scope == spoke.c.scope) & (_d.user_id == user_id))
                .order_by(spoke.c.scope)
            )
            return [Membership(str(r.scope), r.last_spoke, r.left_at) for r in rows]

    async def names_in(
        self, scope: str, platform: str, user_id: str, *, conn: AsyncConnection | None = None
    ) -> tuple[frozenset[str], frozenset[str]]:
        """The (normalised) names others go by in `scope`, and this person's own there."""
        mine = (_p.platform == platform) & (_p.user_id == user_id)
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(_n.normalised, mine.label("mine"))
                .join(persons, _p.id == _n.person_id)
                .where(_n.scope == scope)
                .distinct()
            )
            found = [(str(r[0]), bool(r[1])) for r in rows]
        others = frozenset(n for n, is_mine in found if not is_mine)
        return others, frozenset(n for n, is_mine in found if is_mine)

    # --- what might travel -------------------------------------------------------------

    async def may_carry(
        self,
        target: str,
        platform: str,
        user_ids: Collection[str],
        names: Collection[str] = (),
        *,
        conn: AsyncConnection | None = None,
    ) -> bool:
        """Whether anything at all might be carried into `target` for a wake about these
        members (user ids on `platform`, and whoever answers to one of these normalised
        names there): the target refuses nothing, one of them chose to be carried
        there (into a group: `into_groups`; into a private chat: on unless turned off)
        and has words of their own said in another chat. One statement along primary
        keys and `ix_memories_subject_person`; False is final, True leaves every
        person and memory to the rule."""
        ids = sorted({u for u in user_ids if u})
        wanted = sorted({n for n in names if n})
        if not ids and not wanted:
            return False
        who = _c.user_id.in_(ids)
        if wanted:
            named = (
                select(_p.user_id)
                .join(person_names, _n.person_id == _p.id)
                .where(_n.scope == target, _n.normalised.in_(wanted), _p.platform == platform)
            )
            who = who | _c.user_id.in_(named)
        own_words = (
            select(_m.id)
            .where(
                _m.subject_person == _c.user_id,
                _m.scope != target,
                _m.subject_kind == "person",
                _m.word == "self-only",
                _m.status == "active",
            )
            .exists()
        )
        refused = select(_b.scope).where(_b.scope == target).exists()
        if is_group_scope(target):
            chosen = select(_c.user_id).where(
                _c.platform == platform, _c.into_groups.is_(True), who, own_words, ~refused
            )
        else:  # no row: into their private chat is on
            chosen = (
                select(_c.user_id)
                .where(_c.platform == platform, _c.into_private.is_(False), who)
                .exists()
            )
            mine = select(_m.id).where(
                _m.subject_person.in_(ids),
                _m.scope != target,
                _m.subject_kind == "person",
                _m.word == "self-only",
                _m.status == "active",
            )
            chosen = select(literal(1)).where(~chosen, mine.exists(), ~refused)
        async with self.reading(conn) as conn:
            return (await conn.execute(chosen.limit(1))).first() is not None

    async def candidates(
        self,
        user_id: str,
        scopes: Collection[str],
        now: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> list[Memory]:
        """The memories of `scopes` about member `user_id` in their own words only,
        current at `now` (active, valid, never superseded or forgotten), not relations:
        newest first, at most CARRIED_READ. The rule (people/carry.py) checks each again."""
        wanted = sorted(set(scopes))
        if not wanted:
            return []
        now = as_utc(now)
        superseded = select(_r.id).where(_r.dst_id == _m.id, _r.kind == "supersedes").exists()
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(memories)
                .where(
                    _m.scope.in_(wanted),
                    _m.subject_person == user_id,
                    _m.subject_kind == "person",
                    _m.word == "self-only",
                    _m.type != "relation",
                    _m.status == "active",
                    (_m.valid_from.is_(None)) | (_m.valid_from <= now),
                    (_m.valid_to.is_(None)) | (_m.valid_to > now),
                    ~superseded,
                    ~forgotten(_m.id),
                )
                .order_by(_m.id.desc())
                .limit(CARRIED_READ)
            )
            return [to_memory(r) for r in rows]

    async def by_ids(
        self, ids: Collection[int], *, conn: AsyncConnection | None = None
    ) -> list[Memory]:
        """These memories whatever their chat: only for `core.carrying.recheck`, which
        lets the rule decide each one again before anything of them is shown."""
        wanted = sorted(set(ids))
        if not wanted:
            return []
        async with self.reading(conn) as conn:
            rows = await conn.execute(select(memories).where(_m.id.in_(wanted)).order_by(_m.id))
            return [to_memory(r) for r in rows]
