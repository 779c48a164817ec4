"""`core.person_cards`: each member's card in a group, and what a reply shows of the
people it concerns (docs/design.md#people).

The nightly `people` step writes the cards (memory_core/nightly/step_people.py);
this reads them for `/cards @某人` and for the reply prompt, where every reply gets,
in one read of the store: the asker's card, the cards of the members the wake names
(an @-mention or a name of theirs in its text), each person's current name in this
chat, and whose word each injected memory about a member is (the senders of its
evidence messages). Nothing is read across chats.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memory_core.prompts.person_card import said_by
from memory_core.storage import PeopleRepo, PersonCard, PersonCardsRepo
from memory_core.storage.engine import Database
from memory_core.types import Memory, is_group_scope

from .names import normalised_name

NAME_SCAN_CHARS = 120
"""How much of a wake's text is searched for members' names."""
NAME_MIN, NAME_MAX = 2, 12
"""Lengths of the substrings tried as names (a one-letter name is too often a word)."""


@dataclass(frozen=True, slots=True)
class MemoryWord:
    """How the prompt names a memory's subject and whose word it is."""

    subject: str
    """The member's current name in this chat (else the memory's own subject)."""
    said: str
    """`本人说`, `小周说`, `听说`, or empty (not a member's memory)."""


@dataclass(frozen=True, slots=True)
class PeopleView:
    cards: tuple[tuple[str, str], ...] = ()
    """(current name, card text): the asker's first, then the members the wake names."""
    words: dict[int, MemoryWord] = field(default_factory=dict[int, MemoryWord])
    """memory id -> its subject's name and whose word it is."""


def name_candidates(text: str) -> set[str]:
    """Every spelling in `text` that could be a member's (normalised) name: its words,
    and its substrings of NAME_MIN..NAME_MAX characters (Chinese has no spaces). Pure."""
    head = normalised_name(text[:NAME_SCAN_CHARS])
    found = {w.lstrip("@") for w in head.split() if w.lstrip("@")}
    for start in range(len(head)):
        for size in range(NAME_MIN, NAME_MAX + 1):
            piece = head[start : start + size]
            if len(piece) < size:
                break
            if piece.strip() == piece and "@" not in piece:
                found.add(piece)
    return {f for f in found if len(f) >= NAME_MIN}


class PersonCards:
    def __init__(self, db: Database) -> None:
        self.repo = PersonCardsRepo(db)
        self.people = PeopleRepo(db)

    async def prompt_view(
        self,
        scope: str,
        *,
        asker: str | None,
        mentioned: Sequence[str] = (),
        text: str = "",
        memories: Sequence[Memory] = (),
    ) -> PeopleView:
        """What the reply prompt shows of the people it concerns (one read)."""
        members = [m.subject_person for m in memories if m.subject_person]
        wanted_ids = [m.id for m in memories if m.subject_kind == "person" and m.word == "hearsay"]
        group = is_group_scope(scope)
        carded = [u for u in (asker, *mentioned) if u] if group else []
        found = await self.repo.prompt_people(
            scope,
            memory_ids=wanted_ids,
            members=carded,
            subjects=members,
            name_forms=name_candidates(text) if group and text else (),
        )
        words: dict[int, MemoryWord] = {}
        for memory in memories:
            person = memory.subject_person
            if memory.subject_kind != "person" or not person:
                continue
            name = found.names.get(person, memory.subject)
            # A speaker with no name here any more (forgotten) is left out: never an id.
            speakers = [
                found.names[s]
                for s in found.speakers.get(memory.id, ())
                if s != person and s in found.names
            ]
            words[memory.id] = MemoryWord(name, said_by(memory.word, name, speakers))
        cards: list[tuple[str, str]] = []
        if group:
            for user_id in dict.fromkeys((*carded, *found.named)):
                card = found.cards.get(user_id)
                if card is not None and card.content.strip():
                    cards.append((found.names.get(user_id, user_id), card.content))
        return PeopleView(tuple(cards), words)

    async def card_of(self, scope: str, user_id: str) -> tuple[str, PersonCard | None]:
        """(the member's current name here, their card here or None)."""
        names = await self.repo.names(scope, [user_id])
        cards = await self.repo.current(scope, [user_id])
        return names.get(user_id, user_id), cards.get(user_id)

    async def history(self, scope: str, user_id: str) -> list[PersonCard]:
        return await self.repo.history(scope, user_id)

    async def members_named(self, scope: str, name: str) -> list[str]:
        """The user ids of the members (not the bot) who answer to `name` here. When
        several went by it, whoever goes by it now, if only one does (as subjects
        resolve); else all of them (the caller asks for an @)."""
        wanted = normalised_name(name)
        if not wanted:
            return []
        holders = [p.user_id for p in await self.people.who(scope, wanted) if not p.is_bot]
        if len(holders) > 1:
            return await self.repo.meant(scope, [wanted]) or holders
        return holders
