"""The aliases table folded onto the persons of a chat (pure).

An alias maps a name to a chat's canonical subject (names.canonical_subject),
never to an account. It becomes a person's `alias` name in that chat when the
canonical name it leads to (following the chain as recall does) is, in that chat, a
name of exactly one person, or that person's user id; a canonical name several persons
answer to, or none, folds nowhere. Its sighting is the alias's creation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from memory_core.storage import AliasRow, ChatPerson, NameSeen

from .names import canonical_subject, name_forms, normalised_name
from .observe import Seen, Sightings


def fold_aliases(rows: Iterable[AliasRow], chats: Mapping[str, Sequence[ChatPerson]]) -> Seen:
    """`rows` (of any chats) as alias names of the persons in `chats` (scope -> the
    persons with a name there)."""
    by_scope: dict[str, list[AliasRow]] = {}
    for row in rows:
        by_scope.setdefault(row.scope, []).append(row)
    found = Sightings()
    for scope, scoped in by_scope.items():
        people = chats.get(scope, ())
        alias_map = {r.alias: r.canonical for r in scoped}
        for row in scoped:
            forms = name_forms(row.alias)
            target = _person_named(canonical_subject(row.alias, alias_map), people)
            if forms is None or target is None:
                continue
            person, at = target.person, row.created_at
            found.name(NameSeen(person.platform, person.user_id, scope, *forms, "alias", at, at))
    return found.seen()


def _person_named(name: str, people: Sequence[ChatPerson]) -> ChatPerson | None:
    """The one person of the chat called `name` (an alias excluded) or with that id."""
    wanted = normalised_name(name)
    if not wanted:
        return None
    answering = [
        p
        for p in people
        if p.person.user_id == name.strip()
        or any(n.normalised == wanted and n.source != "alias" for n in p.names)
    ]
    return answering[0] if len(answering) == 1 else None
