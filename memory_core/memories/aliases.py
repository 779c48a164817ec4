"""Explicit nicknames inside one chat (pure). Aliases are never guessed: they come
from `add_alias` (the model's tool, an admin, a migration) and only ever map a name
to the canonical subject *of the same chat*."""

from __future__ import annotations

from collections.abc import Mapping

from memory_core.tokenize import normalise


def canonical_subject(subject: str, alias_map: Mapping[str, str]) -> str:
    """The canonical name for `subject` (following at most a few links), else itself."""
    name = subject.strip() or "group"
    for _ in range(4):
        nxt = alias_map.get(name)
        if nxt is None or nxt == name:
            break
        name = nxt
    return name


def name_groups(alias_map: Mapping[str, str]) -> list[frozenset[str]]:
    """Each canonical name with all of its aliases."""
    groups: dict[str, set[str]] = {}
    for alias in alias_map:
        canonical = canonical_subject(alias, alias_map)
        groups.setdefault(canonical, {canonical}).add(alias)
    return [frozenset(g) for g in groups.values()]


def mentioned_names(text: str, alias_map: Mapping[str, str]) -> set[str]:
    """Every name of every alias group that the text mentions by any of its names."""
    lowered = normalise(text)
    found: set[str] = set()
    for group in name_groups(alias_map):
        if any(normalise(name) in lowered for name in group):
            found |= group
    return found
