"""Explicit nicknames inside one chat (pure). Aliases are never guessed: they come
from `add_alias` (the model's tool, an admin, a migration) and only ever map a name
to the canonical subject *of the same chat*."""

from __future__ import annotations

from collections.abc import Mapping


def canonical_subject(subject: str, alias_map: Mapping[str, str]) -> str:
    """The canonical name for `subject` (following at most a few links), else itself."""
    name = subject.strip() or "group"
    for _ in range(4):
        nxt = alias_map.get(name)
        if nxt is None or nxt == name:
            break
        name = nxt
    return name
