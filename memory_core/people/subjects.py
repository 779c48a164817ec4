"""Whom a memory is about, and whose word it is (pure: no I/O).

`resolve` reads a memory's subject (the text the consolidating model, an admin or an
import wrote, or the user id the model gave) against the persons of that chat:

1. a user id given with it (`subject_id`): that member of the chat, else `unresolved`
   (an id of no one here, or of someone in another chat: nothing crosses a chat);
2. the chat itself (`group`, 群, 大家 ...) or the bot (`bot`, its nicknames, an
   account marked as the bot);
3. a member's user id written as the subject (bare or as an @-mention: `@12345`);
4. a name (through the chat's aliases first) that exactly one member of the chat went
   by; when several did, the one who goes by it now, if only one does; else
   `unresolved` (two members sharing a name is never guessed);
5. otherwise a named thing (a pet, a game, a place), or `unresolved` when the writer
   said it is a member, it looks like an account (digits, an @-mention), or someone
   goes by it in another chat (`elsewhere`: a person, only not one of this chat; that
   person is never named by it).

Only the chat's own persons (`people`) are ever returned: a name or id of anyone else
is at most `unresolved`.

`word_of` says whose word a memory about a member rests on, from its evidence: the
bot's lines and messages quoting the bot count for no one (as in consolidation), and
evidence that is another memory or a fragment is derived, never the member's own.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from memory_core.storage import ChatPerson
from memory_core.types import SubjectKind, Word

from .names import normalised_name

GROUP_WORDS = frozenset(
    {
        "group",
        "群",
        "本群",
        "这个群",
        "全群",
        "群里",
        "群友",
        "群友们",
        "大家",
        "所有人",
        "everyone",
    }
)
BOT_WORDS = frozenset({"bot", "机器人", "你"})
PERSON_HINTS = frozenset({"person", "member"})
"""A kind the writer may state for a member (the consolidation tool's `subject_kind`)."""


@dataclass(frozen=True, slots=True)
class Subject:
    kind: SubjectKind
    person: str | None = None
    """The member's user id, for `person` (and the bot's account, for `bot`, when known)."""


@dataclass(frozen=True, slots=True)
class Said:
    """One evidence message as `word_of` reads it."""

    sender_id: str
    is_bot: bool = False
    quotes_bot: bool = False


def resolve(
    subject: str,
    people: Sequence[ChatPerson],
    *,
    canonical: str | None = None,
    subject_id: str | None = None,
    kind: str | None = None,
    bot_names: Iterable[str] = (),
    elsewhere: Collection[str] = (),
) -> Subject:
    """`subject` of a memory of the chat whose persons are `people` (the module says
    how); `canonical`: the name the chat's aliases lead `subject` to; `elsewhere`:
    normalised names persons go by in other chats (`wanted_names` says which to ask)."""
    if subject_id is not None and subject_id.strip():
        return _by_id(subject_id.strip(), people) or Subject("unresolved")
    written = subject.strip()
    canonical = (canonical or written).strip()
    wanted = wanted_names(written, canonical)
    if wanted & GROUP_WORDS or kind == "group":
        return Subject("group")
    bots = {normalised_name(n) for n in bot_names} | BOT_WORDS
    if wanted & bots or kind == "bot":
        return Subject("bot")
    for text in dict.fromkeys((written, canonical, written.lstrip("@").strip())):
        found = _by_id(text, people)
        if found is not None:
            return found
    found = _by_name(wanted, people)
    if found is not None:
        return found
    if kind in PERSON_HINTS or _looks_like_account(written) or wanted & set(elsewhere):
        return Subject("unresolved")
    return Subject("thing")


def wanted_names(subject: str, canonical: str | None = None) -> set[str]:
    """The normalised names `resolve` matches `subject` by (to ask which of them
    persons go by in other chats)."""
    return {normalised_name(subject), normalised_name(canonical or subject)} - {""}


def word_of(person: str | None, evidence: Sequence[Said], derived: bool) -> Word | None:
    """Whose word a memory about member `person` is, its evidence messages `evidence`
    (`derived`: it also rests on another memory or a fragment); None when it is about
    no member."""
    if person is None:
        return None
    own = [s for s in evidence if s.sender_id == person and not (s.is_bot or s.quotes_bot)]
    if not own:
        return "hearsay"
    return "self-only" if len(own) == len(evidence) and not derived else "self"


def _by_id(user_id: str, people: Sequence[ChatPerson]) -> Subject | None:
    for chat_person in people:
        person = chat_person.person
        if person.user_id == user_id:
            return Subject("bot", person.user_id) if person.is_bot else Subject("person", user_id)
    return None


def _by_name(wanted: set[str], people: Sequence[ChatPerson]) -> Subject | None:
    answering = [p for p in people if any(n.normalised in wanted for n in p.names)]
    if not answering:
        return None
    if len(answering) > 1:
        # The name is shared: only whoever goes by it now (their latest name) is meant.
        current = [p for p in answering if p.names[0].normalised in wanted]
        if len(current) != 1:
            return Subject("unresolved")
        answering = current
    person = answering[0].person
    return Subject("bot", person.user_id) if person.is_bot else Subject("person", person.user_id)


def _looks_like_account(text: str) -> bool:
    bare = text.lstrip("@").strip()
    return text.startswith("@") or (bare.isascii() and bare.isdigit() and len(bare) >= 5)
