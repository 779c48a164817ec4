"""`core.carrying`: a person's own words said in a group, in their other chats (#45).

`carried` is the one scope function of carrying: every read of another chat's memory
for a wake (recall, and through it `/recall`, `/why`, `search_memory`, the console)
goes through it. It reads what the rule needs (carry.py: the person's choice, the
chats they were seen speaking in and leaving, the target's block, the source groups'
other members) and the candidates in SQL, then lets the pure rule decide each one.
Whatever it cannot read carries nothing.

The choices (`/carry private|groups on|off`) are kept per person (platform and user
id), the blocks (`/carry block|unblock`) per chat; turning a choice off takes effect at
the next wake, since nothing carried is stored in the target chat.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.clock import Clock
from memory_core.storage import CarryChoice, CarryRepo, Membership, PeopleRepo
from memory_core.storage.engine import Database
from memory_core.types import Memory, is_group_scope, private_scope, scope_platform

from . import carry
from .carry import CarryState
from .names import normalised_name

log = logging.getLogger("yuji.carry")

NOTHING_TTL_S = 30.0
"""How long a wake's "nothing might travel" answer is kept (`Nothing`)."""


@dataclass(frozen=True, slots=True)
class CarryView:
    """A person's state as `/carry` tells it, and what would travel where."""

    choice: CarryChoice
    groups: tuple[str, ...]
    """The groups they are in (seen speaking, not seen leaving) on this platform."""
    words: tuple[Memory, ...]
    """Their own words that may travel (from some group, to the chats they chose)."""
    reaches: tuple[str, ...]
    """The chats those words would reach now (their private chat, groups opted in
    and not refusing)."""


@dataclass(frozen=True, slots=True)
class Travels:
    """What of one member travels from and into one chat (the console's person page)."""

    choice: CarryChoice
    blocked: bool
    """This chat refuses anything carried into it."""
    out: tuple[tuple[Memory, tuple[str, ...]], ...]
    """This chat's memories of their own words that travel now, each with the chats
    it reaches."""
    into: tuple[Memory, ...]
    """Their own words from other groups that a wake about them here would be given."""


class Carrying:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        self.repo = CarryRepo(db)
        self.people = PeopleRepo(db)
        self._nothing = Nothing(NOTHING_TTL_S)
        """Wakes found to have nothing that might travel (`CarryRepo.may_carry`)."""

    # --- the scope function ------------------------------------------------------------

    async def carried(
        self,
        target: str,
        about: Iterable[str],
        now: datetime | None = None,
        names: Iterable[str] = (),
    ) -> tuple[Memory, ...]:
        """The memories of other chats that may join a wake in `target` about the
        people `about` (user ids on the target's platform) and the members it names
        (`names`, each resolved in `target` when exactly one person answers to it);
        () for anything it cannot read. One read transaction; what the rule would
        refuse anyway (another's private chat, a refusing group, a choice off) ends
        the reading early, and the rule still decides every memory."""
        now = now or self.clock.now()
        wanted = {p for p in about if p}
        spoken = frozenset(names) if is_group_scope(target) else frozenset[str]()
        if not is_group_scope(target):
            # Only its owner is in a private chat with the bot: no name to look up.
            wanted &= {target.partition(":")[2]}
        if not wanted and not spoken:
            return ()
        key = (target, frozenset(wanted), spoken)
        if self._nothing.holds(key):
            return ()
        out: list[Memory] = []
        try:
            async with self.db.read() as conn:
                platform = scope_platform(target)
                forms = {normalised_name(n) for n in spoken}
                if not await self.repo.may_carry(target, platform, wanted, forms, conn=conn):
                    self._nothing.keep(key)
                    return ()
                wanted |= await self._named(target, spoken, conn)
                for person in sorted(wanted):
                    state, found = await self._read(target, person, now, conn)
                    out.extend(carry.carried(found, target, frozenset(wanted), state, now))
        except Exception:  # fail closed: an unread state carries nothing
            log.warning("carrying into %s: state unread, nothing carried", target, exc_info=True)
            return ()
        return tuple(out)

    async def _named(self, target: str, names: Iterable[str], conn: AsyncConnection) -> set[str]:
        """The user ids of the members `names` name in `target` (one answering each)."""
        out: set[str] = set()
        for name in sorted(set(names)):
            wanted = normalised_name(name)
            found = await self.people.who(target, wanted, conn=conn) if wanted else []
            if len(found) == 1 and not found[0].is_bot:
                out.add(found[0].user_id)
        return out

    async def _read(
        self, target: str, person: str, now: datetime, conn: AsyncConnection
    ) -> tuple[CarryState, list[Memory]]:
        """What the rule needs of `person` for `target` (the block already read: a
        refusing chat never gets here), and the memories that might travel."""
        platform = scope_platform(target)
        choice = await self.repo.choice(platform, person, conn=conn)
        state = CarryState(platform, person, choice, None, False)
        wanted = choice.into_groups if is_group_scope(target) else choice.into_private
        if not wanted:
            return state, []
        memberships = tuple(await self.repo.memberships(platform, person, conn=conn))
        state = CarryState(platform, person, choice, memberships, False)
        if not carry.may_reach(target, state, frozenset({person})):
            return state, []
        found = await self.repo.candidates(person, _sources(memberships, target), now, conn=conn)
        others: dict[str, frozenset[str]] = {}
        own: dict[str, frozenset[str]] = {}
        for scope in sorted({m.scope for m in found}):
            others[scope], own[scope] = await self.repo.names_in(scope, platform, person, conn=conn)
        return CarryState(platform, person, choice, memberships, False, others, own), found

    async def recheck(self, target: str, ids: Iterable[int]) -> dict[int, Memory]:
        """Of these memory ids, those the scope function still carries into `target`
        for a wake about their subject (/why shows a past reply's carried memories
        only while they may still travel there)."""
        found = await self.repo.by_ids(list(ids))
        persons = {m.subject_person for m in found if m.subject_person}
        allowed = {m.id: m for m in await self.carried(target, persons)}
        return {m.id: allowed[m.id] for m in found if m.id in allowed}

    def memories_changed(self, _scope: str = "") -> None:
        """A chat's memories changed in this process (`core.memories`, an import): what
        might travel is read again at the next wake."""
        self._nothing.clear()

    # --- a person's choices, a chat's block --------------------------------------------

    async def view(self, platform: str, user_id: str) -> CarryView:
        """What `/carry` says: the person's choice, their groups, their words that may
        travel and the chats they would reach now."""
        now = self.clock.now()
        async with self.db.read() as conn:
            choice = await self.repo.choice(platform, user_id, conn=conn)
            memberships = tuple(await self.repo.memberships(platform, user_id, conn=conn))
            groups = tuple(
                m.scope
                for m in memberships
                if is_group_scope(m.scope) and carry.member_of(memberships, m.scope)
            )
            reaches: list[str] = []
            for scope in (private_scope(user_id, "" if platform == "qq" else platform), *groups):
                blocked = await self.repo.blocked(scope, conn=conn) is not None
                state = CarryState(platform, user_id, choice, memberships, blocked)
                if carry.may_reach(scope, state, frozenset({user_id})):
                    reaches.append(scope)
        words: dict[int, Memory] = {}
        for scope in reaches:
            for memory in await self.carried(scope, (user_id,), now):
                words.setdefault(memory.id, memory)
        return CarryView(choice, groups, tuple(words[i] for i in sorted(words)), tuple(reaches))

    async def travels(self, scope: str, user_id: str) -> Travels:
        """What of member `user_id`'s words travels from `scope` and where, and what
        would come into it: every answer through the scope function."""
        platform = scope_platform(scope)
        view = await self.view(platform, user_id)
        now = self.clock.now()
        reach: dict[int, list[str]] = {}
        found: dict[int, Memory] = {}
        for target in view.reaches:
            if target == scope:
                continue
            for memory in await self.carried(target, (user_id,), now):
                if memory.scope == scope:
                    found[memory.id] = memory
                    reach.setdefault(memory.id, []).append(target)
        return Travels(
            choice=view.choice,
            blocked=await self.blocked(scope),
            out=tuple((found[i], tuple(reach[i])) for i in sorted(found)),
            into=await self.carried(scope, (user_id,), now),
        )

    async def choose(
        self,
        platform: str,
        user_id: str,
        *,
        into_private: bool | None = None,
        into_groups: bool | None = None,
    ) -> CarryChoice:
        chosen = await self.repo.choose(
            platform,
            user_id,
            self.clock.now(),
            into_private=into_private,
            into_groups=into_groups,
        )
        self._nothing.clear()  # turned on: at the next wake, not after the TTL
        return chosen

    async def block(self, scope: str, by: str) -> None:
        await self.repo.block(scope, by, self.clock.now())

    async def unblock(self, scope: str) -> None:
        await self.repo.unblock(scope)
        self._nothing.clear()

    async def blocked(self, scope: str) -> bool:
        return await self.repo.blocked(scope) is not None

    async def left(self, scope: str, user_id: str, at: datetime | None = None) -> None:
        """A member was seen leaving a group (a leave notice)."""
        await self.repo.left(scope, user_id, at or self.clock.now())


def _sources(memberships: Iterable[Membership], target: str) -> list[str]:
    """The groups of the target's platform the person spoke in, but the target."""
    platform = scope_platform(target)
    return sorted(
        {
            m.scope
            for m in memberships
            if m.scope != target and is_group_scope(m.scope) and scope_platform(m.scope) == platform
        }
    )


class Nothing:
    """The wakes (target, user ids, names) found to have nothing that might travel,
    each for `ttl_s` seconds: a chat's wakes about the same people cost no statement
    while that holds. Only "nothing" is kept, never what travels: a choice turned off
    or a block takes effect at the next wake whoever made it; one turned on (or a
    block lifted) by this process clears it at once, by another process within the
    TTL; a memory newly able to travel comes within the TTL."""

    MAX_KEPT = 4096

    def __init__(self, ttl_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.clock = clock
        """Seconds, monotonic."""
        self._until: dict[Hashable, float] = {}

    def holds(self, key: Hashable) -> bool:
        until = self._until.get(key)
        if until is None:
            return False
        if until > self.clock():
            return True
        del self._until[key]
        return False

    def keep(self, key: Hashable) -> None:
        now = self.clock()
        if len(self._until) >= self.MAX_KEPT:
            self._until = {k: u for k, u in self._until.items() if u > now}
            if len(self._until) >= self.MAX_KEPT:
                self._until.clear()
        self._until[key] = now + self.ttl_s

    def clear(self) -> None:
        self._until.clear()
