"""Whom a wake @-mentions: members it names by an @ rather than by a word.

The chat path hands over the user ids of the wake's mentions (a QQ `at` segment's
`qq`, a Telegram `text_mention`'s user), never the persona's own @. Each is read as a
member of the chat with the names they go by there (the person index, latest first),
as the asker is with the name they came with, and the wake names them
(question.py): the features read memories about them as about the person asked
about, the searches look for their names, and carrying (carried.py) counts the wake
as about them. Another account of the deployment (a bot in the index) is no member;
an id the index never saw is a member with no name, known by their id alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage import PeopleRepo
from memory_core.types import Asker, scope_platform

MAX_MENTIONED = 10
"""Mentions read per wake at most (a message @-ing the whole chat one by one names no
one in particular)."""


async def members(
    people: PeopleRepo, conn: AsyncConnection, scope: str, user_ids: Sequence[str]
) -> tuple[Asker, ...]:
    """The members `user_ids` mention in `scope`, in the order mentioned, each with
    their names in the chat; one statement."""
    wanted = list(dict.fromkeys(u.strip() for u in user_ids if _user_id(u.strip())))
    wanted = wanted[:MAX_MENTIONED]
    if not wanted:
        return ()
    found = {
        p.person.user_id: p
        for p in await people.mentioned(scope, scope_platform(scope), wanted, conn=conn)
    }
    out: list[Asker] = []
    for user_id in wanted:
        known = found.get(user_id)
        if known is not None and known.person.is_bot:
            continue
        names = tuple(dict.fromkeys(n.name for n in known.names)) if known is not None else ()
        out.append(Asker(user_id, names))
    return tuple(out)


def _user_id(value: str) -> bool:
    """A platform's user id (digits; Telegram's may be negative), not QQ's @all."""
    digits = value.removeprefix("-")
    return digits.isascii() and digits.isdigit()
