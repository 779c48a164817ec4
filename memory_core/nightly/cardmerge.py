"""Applying the model's card changes to the current cards: pure, no I/O.

A card is a list of lines. `add` appends a line the card does not already hold;
`change` and `conflict` replace the one existing line they name (a name that matches
no line degrades to an add: nothing is removed on a guess). A replaced line of
"recent status" or "preferences" is returned as displaced, with the model's
past-tense rewrite, so the caller can keep it as a `state` memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memory_core.prompts.nightly import DISPLACING_KINDS, CardChange, CardsReply


@dataclass(frozen=True, slots=True)
class Displaced:
    kind: str
    old_line: str
    past_tense: str


@dataclass(frozen=True, slots=True)
class Merged:
    cards: dict[str, tuple[str, ...]]
    """Every kind, with its lines after the changes."""
    changed: frozenset[str]
    displaced: tuple[Displaced, ...]
    ignored: tuple[str, ...]
    """Changes that repeated what a card already says."""


def lines_of(content: str) -> tuple[str, ...]:
    """A card's stored text -> its lines (a leading "- " bullet is tolerated)."""
    out: list[str] = []
    for raw in content.splitlines():
        line = raw.strip().removeprefix("- ").strip()
        if line:
            out.append(line)
    return tuple(out)


def content_of(lines: Sequence[str]) -> str:
    return "\n".join(lines)


def _norm(text: str) -> str:
    return "".join(text.split()).rstrip("。.；;")


def _find(lines: Sequence[str], target: str | None) -> int | None:
    if not target:
        return None
    wanted = _norm(target.removeprefix("- "))
    for index, line in enumerate(lines):
        if _norm(line) == wanted:
            return index
    return None


def check_cards_reply(reply: CardsReply, current: Mapping[str, Sequence[str]]) -> str | None:
    """Why a schema-valid reply cannot be applied, or None.

    The only hard rule: a change that really replaces a line of "recent status" or
    "preferences" must say what that line becomes in past tense.
    """
    for change in reply.changes:
        if change.action == "add" or change.kind not in DISPLACING_KINDS:
            continue
        found = _find(current.get(change.kind, ()), change.replaces)
        if found is not None and not (change.old_past_tense or "").strip():
            return f"{change.kind}: replacing {change.replaces!r} needs old_past_tense"
    return None


def merge(current: Mapping[str, Sequence[str]], changes: Sequence[CardChange]) -> Merged:
    cards = {kind: list(lines) for kind, lines in current.items()}
    changed: set[str] = set()
    displaced: list[Displaced] = []
    ignored: list[str] = []
    for change in changes:
        lines = cards.setdefault(change.kind, [])
        text = change.text.strip().removeprefix("- ").strip()
        if _find(lines, text) is not None:
            ignored.append(f"{change.kind}: {text}")
            continue
        index = None if change.action == "add" else _find(lines, change.replaces)
        if index is None:
            lines.append(text)
        else:
            old = lines[index]
            lines[index] = text
            past = (change.old_past_tense or "").strip()
            if change.kind in DISPLACING_KINDS and past:
                displaced.append(Displaced(change.kind, old, past))
        changed.add(change.kind)
    return Merged(
        cards={kind: tuple(lines) for kind, lines in cards.items()},
        changed=frozenset(changed),
        displaced=tuple(displaced),
        ignored=tuple(ignored),
    )
