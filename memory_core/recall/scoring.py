"""Relevance of one memory to one question (pure; no I/O, no clock).

Weights are IDF computed inside the chat, so words every memory of the chat shares
(member names, the bot's name, the group's topic) count almost nothing. Names are
not evidence of relevance at all; instead, a question that names members is only
answered by memories that mention one of them (by any alias): a memory about
someone else may fill a slot, never break the silence.

To break the silence (`speaks`) a memory must also cover two of the question's
*anchors* when it has two or more (煤球 + 绝育: a memory about another cat's
spaying, or about 煤球's food, answers neither), and must not rest on one-character
words alone when the question says more. A which-one slot ("哪家公司") counts only
where the memory names which one.

- Exact words (stage 1): the question's content terms found in the memory.
- Near wording (stage 2): the question's words may also match through the synonym
  table, at a discount.
- `cover`: the share of the question's known content weight that matched;
  `rarity`: the matched terms' normalised IDF summed (one rare term, or several
  moderately common ones, make a match distinctive); `focus`: the share of the
  memory's own weight that matched (short, to-the-point memories rank higher).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .lexicon import Lexicon, is_stop, is_word
from .query import Query
from .tokenize import NUMERAL_CHARS, bigram_tokens, is_cjk, is_numeric, normalise, numbers


@dataclass(frozen=True, slots=True)
class Params:
    speak_rarity: float = 0.4
    """Least summed normalised IDF of the matched content terms to say anything."""
    speak_cover: float = 0.3
    """Least share of the question's known content weight a memory must cover."""
    fill_cover: float = 0.2
    """Once something clears the bars, others may fill slots from this cover on."""
    fill_rarity: float = 0.3
    fill_ratio: float = 0.6
    """...and at least this share of the best memory's cover."""
    stranger_penalty: float = 0.5
    """Cover is multiplied by this when the question names members the memory does
    not mention (it may still be about their pet or their plans, but less likely)."""
    unknown_weight: float = 1.0
    """How much a real word the chat never used counts against a match."""
    synonym_discount: float = 0.8
    """A match through the synonym table counts this fraction of an exact one."""
    candidate_limit: int = 60
    anchor_df: int = 10
    """A run of terms that each more memories than this use names a topic, not one
    thing asked about: it is no anchor."""


@dataclass(frozen=True, slots=True)
class Match:
    memory_id: int
    exact: tuple[str, ...]
    synonyms: tuple[tuple[str, str], ...]
    """(question word, memory word) pairs linked by the synonym table."""
    cover: float
    rarity: float
    focus: float
    anchors: int = 0
    """How many of the question's anchors (runs of adjacent known terms) it covers."""
    of_anchors: int = 0
    """How many anchors the question has."""
    weak: bool = False
    """It matched only one-character words while the question says more than that."""
    stranger: bool = False
    """The question names members and the memory mentions none of them."""

    @property
    def score(self) -> float:
        return self.cover * (0.7 + 0.3 * self.focus)

    @property
    def shown(self) -> tuple[str, ...]:
        return self.exact + tuple(a if a == b else f"{a}≈{b}" for a, b in self.synonyms)


MIN_CHAT = 30


def idf(df: int, n: int) -> float:
    """Smoothed inverse document frequency within a chat of `n` memories."""
    return math.log((n + 1) / (df + 0.5))


class Weights:
    """Term weights of one question in one chat."""

    def __init__(
        self,
        query: Query,
        df: Mapping[str, int],
        n: int,
        params: Params,
        *,
        names: tuple[str, ...] = (),
    ) -> None:
        self.query = query
        self.names = names
        """Every name of the chat (members, aliases, the bot's nicknames)."""
        self.df = df
        # A small chat behaves like one of MIN_CHAT memories whose unseen ones lack the
        # term: one memory in two is not "common", it is simply all there is.
        self.n = max(n, MIN_CHAT)
        self.params = params
        self.max_idf = idf(0, self.n)
        self._memo: dict[str, float] = {}
        self._doc_memo: dict[str, float | None] = {}
        self._known_mass: float | None = None
        self.content = frozenset(
            t
            for t in query.terms
            if query.is_content(t) and not is_stop(t) and t not in query.picks
        )
        self.known = frozenset(t for t in self.content if df.get(t, 0) > 0)
        self.unknown_words = frozenset(
            t
            for t in self.content - self.known
            if is_word(t) and t not in query.slots and not _straddles(t, query.text, self.known)
        )
        """Real words of the question that no memory of the chat uses: what they ask
        about is not here, so they weigh against every match. Words naming the kind
        of answer ("什么牌子") don't: the memory states the brand, not the word."""
        self.singles = self.content & query.singles
        self.picks = frozenset(t for t in query.picks if query.is_content(t) and not is_stop(t))
        self.anchors = tuple(
            a for a in _anchors(query, self.known) if min(df[t] for t in a) <= params.anchor_df
        )

    def without_restatements(self, repeats: Mapping[str, int]) -> Weights:
        """The same weights, counting a fact written again and again once: `repeats`
        says how many of each term's memories were seen to restate another one."""
        if not repeats:
            return self
        df = dict(self.df)
        for token, count in repeats.items():
            if token in df:
                df[token] = max(1, df[token] - count)
        return Weights(self.query, df, self.n, self.params, names=self.names)

    def of(self, token: str) -> float:
        w = self._memo.get(token)
        if w is None:
            w = self._memo[token] = idf(self.df.get(token, 0), self.n)
        return w

    def norm(self, token: str) -> float:
        return self.of(token) / self.max_idf

    def known_mass(self) -> float:
        if self._known_mass is None:
            self._known_mass = sum(
                self.of(t) for t in self.known
            ) + self.params.unknown_weight * sum(self.of(t) for t in self.unknown_words)
        return self._known_mass

    def doc_mass(self, tokens: frozenset[str]) -> float:
        """The memory's own content weight (IDF where known, else a typical value)."""
        memo = self._doc_memo
        total = 0.0
        for t in tokens:
            if t in memo:
                w = memo[t]
            else:
                w = memo[t] = self._doc_weight(t)
            if w is not None:
                total += w
        return total

    def _doc_weight(self, token: str) -> float | None:
        """A memory token's share of `doc_mass`; None for names, stop words, numbers."""
        if token in self.query.names or is_stop(token) or is_numeric(token):
            return None
        return self.of(token) if token in self.df else 0.7 * self.max_idf


def match(
    weights: Weights,
    memory_id: int,
    doc_tokens: frozenset[str],
    *,
    lex: Lexicon | None = None,
    doc_text: str = "",
    stranger: bool = False,
) -> Match | None:
    """How the memory answers the question; None when nothing of content matched.

    With `lex`, question words may also match through the synonym table."""
    picked = frozenset(p for p in weights.picks if p in doc_tokens and _named(p, doc_tokens))
    alone: frozenset[str] = frozenset()
    if weights.singles and doc_text:
        text = normalise(doc_text)
        alone = frozenset(c for c in weights.singles if c in text)
    exact = (weights.content & doc_tokens) | picked | alone
    synonyms: list[tuple[str, str]] = []
    covered_words: list[tuple[str, frozenset[str]]] = []
    if lex is not None:
        doc_words = set(lex.words_in(doc_text))
        for word in weights.query.lexicon_words:
            tokens = frozenset(bigram_tokens(word)) - exact
            if not tokens or any(tokens <= c for _, c in covered_words):
                continue
            for other in sorted(lex.expansions.get(word, ())):
                if _present(other, doc_words, doc_tokens):
                    synonyms.append((word, other))
                    covered_words.append((word, tokens))
                    break
    if not exact and not synonyms:
        return None
    discount = weights.params.synonym_discount
    got = sum(weights.of(t) for t in exact)
    rarity = sum(weights.norm(t) for t in exact)
    extra_known = 0.0
    for _, tokens in covered_words:
        w = max(weights.of(t) for t in tokens)
        got += discount * w
        rarity += discount * (w / weights.max_idf)
        if not tokens & (weights.known | weights.unknown_words):
            extra_known += w
    total = weights.known_mass() + extra_known + sum(weights.of(t) for t in picked)
    cover = min(got / total, 1.0) if total else 0.0
    if stranger:
        cover *= weights.params.stranger_penalty
    mass = weights.doc_mass(doc_tokens)
    focus = min(sum(weights.of(t) for t in exact) / mass, 1.0) if mass else 0.0
    shown = tuple(sorted(exact, key=weights.of, reverse=True))
    reached = set(exact).union(*(tokens for _, tokens in covered_words))
    anchors = sum(1 for a in weights.anchors if 2 * len(a & reached) >= len(a))
    weak = not synonyms and exact <= alone and bool(weights.known - weights.singles)
    return Match(
        memory_id,
        shown,
        tuple(synonyms),
        cover,
        rarity,
        focus,
        anchors,
        len(weights.anchors),
        weak,
        stranger,
    )


_WHEN_CHARS = frozenset("年月日周天底初末中前后半今明昨去")
_NEGATION_OR_DEGREE = frozenset("不没别很太挺真更最")
_CLASSIFIERS = frozenset("个只次位件张条本台辆块种回遍趟份")


def _qualifier(token: str, before: str) -> bool:
    """A term that qualifies what is asked rather than naming it: a point in the
    calendar ("年底", "周末"), a quantity ("一次", "个人" in "一个人"), a negation or
    degree ("不好")."""
    if all(c in _WHEN_CHARS for c in token):
        return True
    if token[0] in NUMERAL_CHARS or (before in NUMERAL_CHARS and token[0] in _CLASSIFIERS):
        return True
    return any(c in _NEGATION_OR_DEGREE for c in token)


def _straddles(word: str, text: str, known: frozenset[str]) -> bool:
    """The pair shares a character with a word the chat uses, so the chat's own words
    say how the text is cut: in "玩一次要交" it is 一次, and 次要 is no word here."""
    at = text.find(word)
    while at >= 0:
        if text[max(at - 1, 0) : at + 1] in known or text[at + 1 : at + 3] in known:
            return True
        at = text.find(word, at + 1)
    return False


_UNNAMED_BEFORE = frozenset("被在到去从给把和跟与对向往了着过也都就还又让是个家所")


def _named(word: str, doc_tokens: frozenset[str]) -> bool:
    """The memory names which `word` it is ("设计公司", "城西的新小区"), rather than
    just using the word ("被公司派到", "去一家公司"): some character other than a
    preposition or classifier stands right before it."""
    return any(
        len(t) == 2 and t[1] == word[0] and is_cjk(t[0]) and t[0] not in _UNNAMED_BEFORE
        for t in doc_tokens
    )


def _anchors(query: Query, known: frozenset[str]) -> tuple[frozenset[str], ...]:
    """Runs of adjacent Chinese question terms the chat knows, each naming one thing
    asked about: "煤球绝育了没" has two (煤球, 绝育), "十周年聚会" one. Runs made only
    of qualifiers don't count. (Latin words are not grouped: an English question's
    content words sit between function words, so runs there say nothing.)"""
    out: list[frozenset[str]] = []
    run: list[str] = []
    qualifiers = True
    text = query.text
    cursor = 0
    for token in [*bigram_tokens(text), ""]:
        at = text.find(token, cursor) if token else -1
        if at >= 0:
            cursor = at + 1
        if token in known and is_cjk(token[0]):
            run.append(token)
            qualifiers = qualifiers and _qualifier(token, text[at - 1] if at > 0 else "")
            continue
        if run and not qualifiers:
            out.append(frozenset(run))
        run = []
        qualifiers = True
    return tuple(out)


def restatement_counts(
    docs: Sequence[tuple[str, frozenset[str]]], threshold: float
) -> Counter[str]:
    """For (content, tokens) of fetched memories: how often each token occurs in a
    memory that restates an earlier-listed one (bigram Dice >= threshold, same numbers)."""
    heads: list[tuple[frozenset[str], frozenset[str]]] = []
    counts: Counter[str] = Counter()
    for content, tokens in docs:
        nums = numbers(content)
        for head_tokens, head_nums in heads:
            union = len(tokens) + len(head_tokens)
            if union and head_nums == nums and 2 * len(tokens & head_tokens) / union >= threshold:
                counts.update(tokens)
                break
        else:
            heads.append((tokens, nums))
    return counts


def _present(word: str, doc_words: set[str], doc_tokens: frozenset[str]) -> bool:
    if word in doc_words:
        return True
    grams = bigram_tokens(word)
    return len(word) > 1 and bool(grams) and set(grams) <= doc_tokens


def speaks(m: Match, params: Params) -> bool:
    """Strong enough to break the silence."""
    joint = (m.of_anchors < 2 or m.anchors >= 2) and not m.weak and not m.stranger
    return joint and m.rarity >= params.speak_rarity and m.cover >= params.speak_cover


def fills(m: Match, params: Params, best_cover: float) -> bool:
    """Good enough for a remaining slot once something spoke with `best_cover`."""
    return (
        not m.weak
        and m.rarity >= params.fill_rarity
        and m.cover >= max(params.fill_cover, params.fill_ratio * best_cover)
    )
