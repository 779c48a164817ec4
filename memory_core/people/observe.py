"""Archived messages -> the persons and names they show (pure: no I/O, no clock).

Each message shows:

- its sender (a user id, or the address a QQ export names one by; never an importer's
  own actor), a person of the chat's platform, marked as the bot when the archive
  marked the message so (a deployment's account: storage/archive/archive_dedup.py);
- the sender's name in that chat: what a QQ group showed beside the message is its
  `card` (the group card, else the nickname: the archive keeps only the name shown),
  anywhere else the sender's own `nickname` (a private chat, a Telegram group);
- the account that heard it, a person marked as the bot (it has no name from this);
- each @-mention (a QQ `at` segment) of an id: that person, and the name the
  mention showed, if any, as a `mention` name in this chat.

A batch's sightings are merged per key before they are written: a person's earliest
first sighting, latest last sighting, bot if ever so; a name's spelling at its latest
sighting (ties to the greater spelling by code point). The storage merges the same way
(storage/people/people_write.py), so the index is the same however the messages were
batched, and in whatever order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from memory_core.storage import Heard, NameSeen, PersonSeen
from memory_core.types import NameSource, is_group_scope, scope_platform

from .names import name_forms

CARD_PLATFORMS = frozenset({"qq"})
"""Platforms whose groups show each member under a card of that group (QQ's 群名片):
the name shown there is the `card` source; elsewhere it is the person's own name."""
MAX_ID_CHARS = 64


@dataclass(frozen=True, slots=True)
class Seen:
    """What a batch shows, one entry per key."""

    persons: tuple[PersonSeen, ...] = ()
    names: tuple[NameSeen, ...] = ()


PersonKey = tuple[str, str]
NameKey = tuple[str, str, str, str, NameSource]


class Sightings:
    """Sightings merged per key as they are added (into plain lists: a burst of 500
    messages makes a thousand sightings, and a frozen object each, merged by copies,
    cost the writer's event loop more than its statements)."""

    def __init__(self) -> None:
        self._persons: dict[PersonKey, list[Any]] = {}
        """key -> [is_bot, first_seen, last_seen]"""
        self._names: dict[NameKey, list[Any]] = {}
        """key -> [name, first_seen, last_seen]"""

    def person(self, platform: str, user_id: str, is_bot: bool, at: datetime) -> None:
        known = self._persons.get((platform, user_id))
        if known is None:
            self._persons[(platform, user_id)] = [is_bot, at, at]
            return
        known[0] = known[0] or is_bot
        known[1] = min(known[1], at)
        known[2] = max(known[2], at)

    def name(self, seen: NameSeen) -> None:
        key = (seen.platform, seen.user_id, seen.scope, seen.normalised, seen.source)
        known = self._names.get(key)
        if known is None:
            self._names[key] = [seen.name, seen.first_seen, seen.last_seen]
            return
        if (seen.last_seen, seen.name) > (known[2], known[0]):  # merge_name's rule
            known[0], known[2] = seen.name, seen.last_seen
        known[1] = min(known[1], seen.first_seen)

    def seen(self) -> Seen:
        return Seen(
            tuple(PersonSeen(k[0], k[1], *v) for k, v in self._persons.items()),
            tuple(
                NameSeen(k[0], k[1], k[2], v[0], k[3], k[4], v[1], v[2])
                for k, v in self._names.items()
            ),
        )


def merge_person(a: PersonSeen, b: PersonSeen) -> PersonSeen:
    """Two sightings of one person as one (what the storage's upsert does)."""
    return replace(
        a,
        is_bot=a.is_bot or b.is_bot,
        first_seen=min(a.first_seen, b.first_seen),
        last_seen=max(a.last_seen, b.last_seen),
    )


def merge_name(a: NameSeen, b: NameSeen) -> NameSeen:
    """Two sightings of one name as one (what the storage's upsert does)."""
    latest = max((a.last_seen, a.name), (b.last_seen, b.name))
    return replace(
        a,
        name=latest[1],
        first_seen=min(a.first_seen, b.first_seen),
        last_seen=latest[0],
    )


def observe(heard: Iterable[Heard]) -> Seen:
    """The persons and names `heard` shows, merged per key."""
    found = Sightings()
    for message in heard:
        shown(message, found)
    return found.seen()


def shown(message: Heard, found: Sightings) -> None:
    """Add what one message shows to `found`."""
    platform = scope_platform(message.scope)
    at = message.sent_at
    if message.account:
        found.person(platform, message.account, True, at)
    sender = message.sender_id.strip()
    if _sender_id(sender):
        found.person(platform, sender, message.is_bot, at)
        source: NameSource = (
            "card" if platform in CARD_PLATFORMS and is_group_scope(message.scope) else "nickname"
        )
        _named(found, platform, sender, message, message.sender_name, source)
    for user_id, name in mentions(message.segments):
        found.person(platform, user_id, user_id == message.account, at)
        if name != user_id:  # a client that knows no name shows the id
            _named(found, platform, user_id, message, name, "mention")


def mentions(segments: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(id, the name it showed or "") of each @-mention of one person (not @all)."""
    found: list[tuple[str, str]] = []
    for segment in segments:
        data = segment.get("data")
        if segment.get("type") != "at" or not isinstance(data, Mapping):
            continue
        target: Any = data.get("qq")  # pyright: ignore[reportUnknownMemberType]
        user_id = str(target).strip() if isinstance(target, str | int) else ""
        if not _user_id(user_id) or isinstance(target, bool):
            continue
        name: Any = data.get("name")  # pyright: ignore[reportUnknownMemberType]
        found.append((user_id, name if isinstance(name, str) else ""))
    return found


def _named(
    found: Sightings, platform: str, user_id: str, message: Heard, name: str, source: NameSource
) -> None:
    forms = name_forms(name)
    if forms is None:
        return
    at = message.sent_at
    found.name(NameSeen(platform, user_id, message.scope, *forms, source, at, at))


def _user_id(value: str) -> bool:
    """A platform's user id: digits (Telegram's may be negative), within bounds."""
    digits = value.removeprefix("-")
    return 0 < len(value) <= MAX_ID_CHARS and digits.isascii() and digits.isdigit()


def _sender_id(value: str) -> bool:
    """A user id, or the address a QQ export names a sender by (`昵称<邮箱>`, qq_txt.py);
    not an importer's own actor (`import:facts`, `pack`)."""
    if _user_id(value):
        return True
    return len(value) <= MAX_ID_CHARS and "@" in value and not any(c.isspace() for c in value)
