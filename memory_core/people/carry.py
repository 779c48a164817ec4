"""The one door across chats (#45; docs/chat-commands.md#带话), as a pure rule: what of a
person's words may follow them into another chat, where to, and when.

- **What:** a memory about the person, `self-only` (every piece of its evidence is a
  message of theirs: memory_core/people/subjects.py `word_of`), said in a group of the
  same platform, current (active, valid now; never retracted, superseded or
  forgotten: those are no longer active or valid), not a relation, and naming no
  other member of the group it was said in. Hearsay never travels, nor anything said
  in a private chat, whoever asks.
- **Where:** a chat the person is in (seen speaking there, not seen leaving since),
  and only for a wake about that person (the asker, or named).
- **When:** into their own private chat unless they turned it off; into their other
  groups only if they turned it on, and never into a group whose admin refused.

Anything the rule cannot know (the choice, the memberships, the block, the other
members' names) is None and carries nothing: fail closed, like visibility.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from memory_core.clock import as_utc
from memory_core.storage import CarryChoice, Membership
from memory_core.tokenize import normalise
from memory_core.types import Memory, is_group_scope, scope_platform

MIN_NAME_CHARS = 2
"""A member's name shorter than this (one character) is not looked for in a memory's
text: it would match inside ordinary words and carry nothing for no reason."""


@dataclass(frozen=True, slots=True)
class CarryState:
    """What the rule knows of one person, read for one wake in `target`."""

    platform: str
    person: str
    """Their user id on `platform`."""
    choice: CarryChoice | None
    memberships: tuple[Membership, ...] | None
    blocked: bool | None
    """The target chat refuses anything carried into it."""
    others: Mapping[str, frozenset[str]] | None = None
    """Per source chat: the normalised names of its other members (None: unknown, a
    chat missing here: unknown)."""
    own: Mapping[str, frozenset[str]] = field(default_factory=dict[str, frozenset[str]])
    """Per source chat: the person's own normalised names there (their own name is not
    another member's, even when another's is part of it: 小明 in 小明明)."""


def member_of(memberships: Iterable[Membership], scope: str) -> bool:
    """Seen speaking in `scope`, and not seen leaving it since."""
    return any(
        m.scope == scope and (m.left_at is None or as_utc(m.last_spoke) > as_utc(m.left_at))
        for m in memberships
    )


def own_private(scope: str, person: str, platform: str) -> bool:
    """`scope` is `person`'s own private chat with the bot on `platform`."""
    return (
        not is_group_scope(scope)
        and scope_platform(scope) == platform
        and scope.partition(":")[2] == person
    )


def may_reach(target: str, state: CarryState, about: frozenset[str]) -> bool:
    """Whether anything of `state.person` may be carried into `target` for a wake
    about the people `about` (user ids)."""
    if state.person not in about or not state.person:
        return False
    if state.choice is None or state.memberships is None or state.blocked is None:
        return False
    if state.blocked or scope_platform(target) != state.platform:
        return False
    if not member_of(state.memberships, target):
        return False
    if is_group_scope(target):
        return state.choice.into_groups
    return own_private(target, state.person, state.platform) and state.choice.into_private


def may_travel(memory: Memory, state: CarryState, now: datetime) -> bool:
    """Whether `memory` is one of `state.person`'s own words that may leave its chat."""
    now = as_utc(now)
    if not (
        memory.subject_kind == "person"
        and memory.subject_person == state.person
        and memory.word == "self-only"
        and memory.type != "relation"
        and is_group_scope(memory.scope)
        and scope_platform(memory.scope) == state.platform
        and memory.status == "active"
        and (memory.valid_from is None or as_utc(memory.valid_from) <= now)
        and (memory.valid_to is None or as_utc(memory.valid_to) > now)
    ):
        return False
    if state.others is None or memory.scope not in state.others:
        return False
    own = state.own.get(memory.scope, frozenset())
    return not names_any(memory.content, state.others[memory.scope], own)


def names_any(content: str, names: Iterable[str], own: Iterable[str] = ()) -> bool:
    """The (normalised) text of a memory, its subject's own names `own` taken out,
    holds one of these normalised names."""
    text = normalise(content)
    for name in sorted(own, key=len, reverse=True):
        if name:
            text = text.replace(name, "\x1f")
    return any(len(name) >= MIN_NAME_CHARS and name in text for name in names)


def carried(
    memories: Iterable[Memory],
    target: str,
    about: frozenset[str],
    state: CarryState,
    now: datetime,
) -> tuple[Memory, ...]:
    """Those of `memories` that may be carried into `target` for a wake about `about`."""
    if not may_reach(target, state, about):
        return ()
    return tuple(m for m in memories if m.scope != target and may_travel(m, state, now))
