"""What a question asks for, as terms (pure): its exact-word tokens, which of them
are names, numbers or question frame, and the lexicon words it uses."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .lexicon import is_stop, lexicon
from .tokenize import bigram_tokens, is_numeric, normalise
from .visibility import is_retrospective


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    terms: frozenset[str]
    """Exact-word tokens of the question minus its question frame, plus alias names."""
    names: frozenset[str]
    """Tokens that are person/bot names (member names count almost nothing)."""
    lexicon_words: tuple[str, ...]
    """Synonym-table words found in the question (longest match first)."""
    retrospective: bool

    def is_content(self, token: str) -> bool:
        return token not in self.names and not is_numeric(token)


def analyse(text: str, *, names: Iterable[str] = (), alias_names: Iterable[str] = ()) -> Query:
    """`names`: every known name of this chat (subjects, aliases, the bot's nicknames);
    `alias_names`: the names of alias groups the question mentions (all are added)."""
    name_tokens = {t for name in names for t in bigram_tokens(name)}
    extra = {t for name in alias_names for t in bigram_tokens(name)}
    name_tokens |= extra
    terms = {t for t in bigram_tokens(text) if not is_stop(t)} | extra
    words = tuple(
        w for w in lexicon().words_in(text) if not all(is_stop(t) for t in bigram_tokens(w))
    )
    return Query(
        text=normalise(text),
        terms=frozenset(terms),
        names=frozenset(name_tokens & terms),
        lexicon_words=words,
        retrospective=is_retrospective(text),
    )
