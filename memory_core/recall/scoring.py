"""Relevance of one memory to one question (pure; no I/O, no clock).

Stage 1 (exact words): IDF-weighted cosine between the question's terms and the
memory's tokens, where IDF is computed inside the chat, names are damped to almost
nothing, and at least one *distinctive* content term must match.

Stage 2 (near wording): the same cosine, but the question's lexicon words may also
match through the synonym table; at least one non-numeric, non-name term must match.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .lexicon import Lexicon, is_stop
from .query import Query
from .tokenize import bigram_tokens, is_numeric


@dataclass(frozen=True, slots=True)
class Params:
    name_weight: float = 0.1
    """Names (members, aliases, the bot) weigh this fraction of their IDF."""
    number_weight: float = 0.3
    distinctive_df: float = 0.06
    """A content term is distinctive when at most this share of the chat's memories
    hold it (and always when it is in at most `distinctive_min_df` of them)."""
    distinctive_min_df: int = 3
    lexical_bar: float = 0.22
    near_bar: float = 0.3
    synonym_discount: float = 0.8
    """A match through the synonym table counts this fraction of an exact one."""
    candidate_limit: int = 400


@dataclass(frozen=True, slots=True)
class Scored:
    memory_id: int
    score: float
    matched: tuple[str, ...]
    """The words that matched, for the human-readable reason (synonyms as 'a≈b')."""


def idf(df: int, n: int) -> float:
    """Smoothed inverse document frequency within a chat of `n` memories."""
    return math.log((n + 1) / (df + 0.5))


class Weights:
    """Term weights of one question in one chat."""

    def __init__(self, query: Query, df: Mapping[str, int], n: int, params: Params) -> None:
        self.query = query
        self.df = df
        self.n = max(n, 1)
        self.params = params

    def of(self, token: str) -> float:
        w = idf(self.df.get(token, 0), self.n)
        if token in self.query.names:
            return w * self.params.name_weight
        if is_numeric(token):
            return w * self.params.number_weight
        return w

    def distinctive(self, token: str) -> bool:
        if not self.query.is_content(token) or is_stop(token):
            return False
        df = self.df.get(token, 0)
        if df == 0:
            return False
        return df <= max(self.params.distinctive_min_df, self.params.distinctive_df * self.n)

    def doc_norm(self, tokens: Iterable[str]) -> float:
        total = 0.0
        for token in set(tokens):
            if is_stop(token):
                continue
            w = idf(self.df.get(token, 1), self.n)
            total += w * w * (self.params.number_weight**2 if is_numeric(token) else 1.0)
        return math.sqrt(total)


def query_norm(weights: Weights, terms: Iterable[str]) -> float:
    return math.sqrt(sum(weights.of(t) ** 2 for t in set(terms)))


def lexical(weights: Weights, memory_id: int, doc_tokens: frozenset[str]) -> Scored | None:
    """Stage 1 score, or None when no distinctive content term matches."""
    query = weights.query
    matched = query.terms & doc_tokens
    if not any(weights.distinctive(t) for t in matched):
        return None
    dot = sum(weights.of(t) ** 2 for t in matched)
    norm = query_norm(weights, query.terms) * weights.doc_norm(doc_tokens)
    score = dot / norm if norm else 0.0
    shown = tuple(sorted((t for t in matched if query.is_content(t)), key=weights.of, reverse=True))
    return Scored(memory_id, score, shown)


def synonym_hits(
    query: Query, lex: Lexicon, doc_text: str, doc_tokens: frozenset[str]
) -> list[tuple[str, str]]:
    """(question word, memory word) pairs linked by the synonym table."""
    doc_words = set(lex.words_in(doc_text))
    hits: list[tuple[str, str]] = []
    for word in query.lexicon_words:
        for other in lex.expansions.get(word, ()):
            if len(other) == 1 or not bigram_tokens(other):
                present = other in doc_words
            else:
                present = other in doc_words or set(bigram_tokens(other)) <= doc_tokens
            if present:
                hits.append((word, other))
                break
    return hits


def near(
    weights: Weights,
    lex: Lexicon,
    memory_id: int,
    doc_text: str,
    doc_tokens: frozenset[str],
) -> Scored | None:
    """Stage 2 score, or None without a shared non-numeric, non-name content term."""
    query = weights.query
    direct = {t for t in query.terms & doc_tokens if not is_stop(t)}
    hits = synonym_hits(query, lex, doc_text, doc_tokens)
    content_direct = [t for t in direct if query.is_content(t)]
    if not content_direct and not hits:
        return None
    dot = sum(weights.of(t) ** 2 for t in direct)
    covered: set[str] = set(direct)
    for word, _ in hits:
        word_tokens = set(bigram_tokens(word)) - covered
        if not word_tokens:
            continue
        covered |= word_tokens
        w = max(weights.of(t) for t in word_tokens)
        dot += (weights.params.synonym_discount * w) ** 2 * len(word_tokens)
    norm = query_norm(weights, query.terms | covered) * weights.doc_norm(doc_tokens)
    score = dot / norm if norm else 0.0
    shown = tuple(content_direct) + tuple(f"{a}≈{b}" for a, b in hits)
    return Scored(memory_id, score, shown)
