"""What counts as a person's name, and the one spelling names are matched by (pure).

A name is matched by its normalised form: NFKC and lower case (memory_core/tokenize.py,
as every word of recall is), runs of white space as one space, a leading @ dropped (an
@-mention renders the name after it). So `Ａｌｉｃｅ`, `alice ` and `@Alice` are one
name; the index keeps the spelling last seen beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from memory_core.tokenize import normalise

MAX_NAME_CHARS = 128
"""Longer is no name anyone is called by (a QQ card is at most 60 characters, a
Telegram name 129 with its space): such a "name" is left out, not cut."""


def normalised_name(name: str) -> str:
    """The form names are matched by; empty when nothing of a name is left."""
    return " ".join(normalise(name).split()).lstrip("@").strip()


def clean_name(name: object) -> str | None:
    """`name` as written, trimmed (and without a leading @), when it is one (a non-empty string within
    `MAX_NAME_CHARS` whose normalised form is not empty), else None."""
    if not isinstance(name, str):
        return None
    written = name.strip().lstrip("@").strip()
    if not written or len(written) > MAX_NAME_CHARS or not normalised_name(written):
        return None
    return written


@lru_cache(maxsize=1 << 14)
def name_forms(name: str) -> tuple[str, str] | None:
    """(as written, normalised) of a name, None when it is none (`clean_name`); cached:
    a chat's names repeat in every message."""
    written = clean_name(name)
    return None if written is None else (written, normalised_name(written))


def canonical_subject(subject: str, alias_map: Mapping[str, str]) -> str:
    """The canonical name for `subject` in a chat whose explicit nicknames are
    `alias_map` (alias -> canonical, never guessed: `add_alias` from the model's tool,
    an admin or a migration), following at most a few links; else itself."""
    name = subject.strip() or "group"
    for _ in range(4):
        nxt = alias_map.get(name)
        if nxt is None or nxt == name:
            break
        name = nxt
    return name
