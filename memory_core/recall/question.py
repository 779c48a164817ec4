"""The one question analyser every part of recall shares (pure).

It reads a question against what this chat knows of its people (subjects and the
explicit alias table) and says: which members it names (resolved to their canonical
names, nicknames included), which content terms it asks about (names, question-frame
words and grammar removed), what kind of answer it wants, and whether it asks about
the past or whether something still holds. The text given to the embedding model has
nicknames resolved, so a question saying 老三 meets memories written about 张磊.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from memory_core.tokenize import bigram_tokens, is_cjk, normalise
from memory_core.types import Asker

from . import language

NOT_PEOPLE = frozenset({"group", "bot", "群", ""})
_GAP = "\x1f"


@dataclass(frozen=True, slots=True)
class Names:
    """A chat's people: every spelling (normalised) -> its canonical name."""

    canonical: Mapping[str, str]

    @classmethod
    def of(
        cls, subjects: Iterable[str], aliases: Mapping[str, str], bot_names: Iterable[str] = ()
    ) -> Names:
        table: dict[str, str] = {}
        for subject in subjects:
            name = normalise(subject.strip())
            if name not in NOT_PEOPLE:
                table.setdefault(name, name)
        for alias, canonical in aliases.items():
            a, c = normalise(alias.strip()), normalise(canonical.strip())
            if a and c:
                table[a] = c
                table.setdefault(c, c)
        for name in bot_names:
            table.pop(normalise(name), None)
        return cls(table)

    def spellings(self, canonical: str) -> frozenset[str]:
        return frozenset(s for s, c in self.canonical.items() if c == canonical) | {canonical}

    def of_asker(self, asker: Asker | None) -> str | None:
        """The canonical name of the person who asked: the first of their names the
        chat knows (a subject or an alias), else their first name as it is."""
        if asker is None:
            return None
        spelled = [n for n in (normalise(x.strip()) for x in asker.names) if n]
        for name in spelled:
            if name in self.canonical:
                return self.canonical[name]
        return spelled[0] if spelled else None


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    """Normalised."""
    terms: frozenset[str]
    """Content terms: CJK bigrams (a lone character as itself) and latin words."""
    named: frozenset[str]
    """Canonical names of the members the question names."""
    asks: language.AnswerKind | None
    unit: str | None
    """The measure word it counts in (几只 -> 只)."""
    money: bool
    """It asks a price or an amount of money."""
    focus: str | None
    """The thing a "which X" question is about (什么牌子 -> 牌子)."""
    retrospective: bool
    still: bool
    latin: float
    """The share of the question's letters that are latin (English and the like) rather
    than CJK: cosines of the embedding model sit in a different band per language."""
    embed_text: str
    """What the embedding model reads: nicknames resolved, bot names dropped."""
    persons: frozenset[str] = frozenset()
    """User ids of the members it is about (the asker, of a first-person question; the
    members it @-mentions)."""


def analyse(
    text: str,
    names: Names,
    bot_names: Iterable[str] = (),
    asker: Asker | None = None,
    mentioned: Sequence[Asker] = (),
) -> Question:
    """`text` read against the chat's `names`; a first person is `asker` (when known);
    `mentioned`: the members the wake @-mentions (their ids and names in the chat),
    named by it as a spoken name would be."""
    norm = normalise(text)
    members = [(m, names.of_asker(m)) for m in mentioned if m.user_id]
    bare = resolved = norm
    for member, canonical in members:
        # An @ (shown as the member's id, or a name of theirs) says whom, no word more.
        for shown in sorted({member.user_id, *member.names}, key=len, reverse=True):
            at = f"@{normalise(shown.strip())}"
            if len(at) > 1 and at in bare:
                bare = bare.replace(at, _GAP)
                resolved = resolved.replace(at, f"{_GAP}{canonical or ''}{_GAP}")
    bots = sorted({normalise(b) for b in bot_names if b}, key=len, reverse=True)
    bare, resolved = (_without(s.replace("@", " "), bots) for s in (bare, resolved))
    named: set[str] = {canonical for _, canonical in members if canonical}
    stripped = bare
    for spelling in sorted(names.canonical, key=len, reverse=True):
        if language.mentions(stripped, spelling):
            canonical = names.canonical[spelling]
            named.add(canonical)
            stripped = language.replace_name(stripped, spelling, _GAP)
            resolved = language.replace_name(resolved, spelling, _GAP + canonical + _GAP)
    me = names.of_asker(asker)
    persons: set[str] = {member.user_id for member, _ in members}
    if me is not None and language.speaks_of_self(stripped):
        named.add(me)
        resolved = language.mark_self(resolved, _GAP + me + _GAP)
        if asker is not None and asker.user_id:
            persons.add(asker.user_id)
    return Question(
        text=norm,
        terms=content_terms(stripped),
        named=frozenset(named),
        asks=language.asks(norm),
        unit=language.unit_asked(stripped),
        money=language.money_asked(stripped),
        focus=language.focus(stripped),
        retrospective=language.is_retrospective(norm),
        still=language.asks_still(norm),
        latin=latin_share(norm),
        embed_text=" ".join(resolved.replace(_GAP, "").split()) or norm,
        persons=frozenset(persons),
    )


def _without(text: str, bots: Iterable[str]) -> str:
    for bot in bots:
        text = text.replace(bot, " ")
    return text


def name_tokens(q: Question, names: Names) -> set[str]:
    """The index tokens of every spelling of every member the question names (a
    question about 老三 also searches 张磊)."""
    return {
        token
        for canonical in q.named
        for spelling in names.spellings(canonical)
        for token in bigram_tokens(spelling)
    }


def content_terms(text: str) -> frozenset[str]:
    """The terms of a (normalised, names removed) text that say what it is about."""
    for word, whole_word in _frame_removals():
        if word in text:  # most are absent: no pattern is run for them
            text = whole_word.sub(" ", text) if whole_word else text.replace(word, " ")
    grammar = language.function_chars()
    terms: set[str] = set()
    for token in bigram_tokens(text):
        if is_cjk(token[0]):
            if all(ch in grammar for ch in token):
                continue
        elif len(token) < 2 and not token.isdigit():
            continue
        terms.add(token)
    return frozenset(terms)


@cache
def _frame_removals() -> tuple[tuple[str, re.Pattern[str] | None], ...]:
    """Each frame word in removal order, a latin one with its whole-word pattern."""
    return tuple(
        (w, re.compile(rf"\b{re.escape(w)}\b") if w.isascii() else None)
        for w in language.frame_words()
    )


def latin_share(text: str) -> float:
    """The share of a text's letters that are latin, not CJK (0.0 when it has none)."""
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    cjk = sum(1 for ch in text if is_cjk(ch))
    return latin / (latin + cjk) if latin + cjk else 0.0
