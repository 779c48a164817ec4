"""The features of one (question, memory) pair that the relevance model reads (pure).

Each says something general about whether a memory answers a question, never about a
particular phrase, and each depends on the question and that one memory alone (plus
the chat's names and fixed references): nothing is normalised over the chat's other
memories or ranked against the other candidates, so a memory's P does not move when
the chat grows by ten thousand unrelated memories.

- dense:   cosine of the question and the memory under the embedding model, and how
           far it stands above the question's cosine with a fixed background of
           ordinary memories (`Baseline`: some questions sit close to everything);
- words:   the share of the question's content terms the memory states, how many it
           leaves unsaid, and how many terms the question has at all; only terms some
           memory of the chat uses count (a bigram across two words, "球几", is noise no
           memory can state);
- people:  the question names the memory's subject (or a member the memory
           mentions), or names members and the memory is about someone else;
- answer:  the question asks for a time, number, place, name, amount or "which X" and the
           memory states one, or states none; a name apart (a name is said outright
           or not at all, where any number "states" a number: "猫叫什么名字" and
           "煤球是小林养的猫");
- shape:   how long the memory is (a three-word reaction is close to many questions
           and answers none) and how much of the question is latin script (the
           embedding model's cosines sit in a lower band for English);
- time:    the memory's validity has ended (seen only by questions about the past, or
           reached through the supersede chain), which path found it, and whether it
           is dated on the day the question names (when.py, dated.py: its validity
           or an evidence message falls on that day).

`MONOTONE` gives the direction each feature may move P in; training keeps the
weights to it, so more evidence never lowers P (a property test holds it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
import numpy.typing as npt

from memory_core.tokenize import is_cjk, normalise, token_set

from . import language
from .question import NOT_PEOPLE, Question

Via = Literal["search", "link", "successor"]

FEATURES: tuple[str, ...] = (
    "dense",
    "dense_bg",
    "dense_latin",
    "no_vector",
    "cover",
    "unsaid",
    "q_terms",
    "no_terms",
    "names_subject",
    "names_other",
    "kind_stated",
    "kind_missing",
    "name_stated",
    "unit_missing",
    "money_missing",
    "focus_missing",
    "short",
    "latin",
    "ended_asked",
    "via_link",
    "via_successor",
    "dated",
)
DENSE_FEATURES = frozenset({"dense", "dense_bg", "dense_latin", "no_vector"})
MONOTONE: dict[str, int] = {
    "dense": 1,
    "dense_bg": 1,
    "cover": 1,
    "unsaid": -1,
    "names_subject": 1,
    "names_other": -1,
    "kind_stated": 1,
    "kind_missing": -1,
    "name_stated": 1,
    "unit_missing": -1,
    "money_missing": -1,
    "focus_missing": -1,
    "dated": 1,
}
"""+1: a larger value never lowers P; -1: never raises it. Others are free."""

Rows = npt.NDArray[np.float64]
UNSAID_CAP = 4
"""Terms left unsaid count up to this many (a long question is not a worse one)."""
SHORT_TERMS = 3
"""A memory of this few terms is a reaction ("真的假的", "wow congrats"), not a statement."""


@dataclass(frozen=True, slots=True)
class Seen:
    """One candidate as the retrievers saw it."""

    subject: str
    content: str
    ended: bool
    """Its validity has ended (a past state)."""
    dense: float | None
    """Cosine with the question; None when it has no vector yet."""
    dense_rank: int | None
    bm25_rank: int | None
    via: Via = "search"
    dated: bool = False
    """It is dated on the day the question names (dated.py); False when it names none."""
    person: str | None = None
    """The user id of the member it is about (a quote: its sender), when known."""
    kind: str | None = None
    """Its subject's kind (memory_core/types.py SubjectKind); None when not resolved."""


@dataclass(frozen=True, slots=True)
class Baseline:
    """The question's cosine with a fixed background of ordinary memories."""

    mean: float = 0.0
    known: bool = False


def states_term(term: str, said: frozenset[str], text: str) -> bool:
    """Whether a text (its stems `said`, `said_in`; `text` normalised) states a term. A
    term of one CJK character is a one-character word (猫 of 猫叫什么名字), which text
    writes inside its compounds (的猫, 橘猫): any text holding the character states it."""
    return language.stem(term) in said or (lone(term) and term in text)


def is_about(
    subject: str,
    text: str,
    named: frozenset[str],
    person: str | None = None,
    persons: frozenset[str] = frozenset(),
) -> bool:
    """A memory (its subject and text, normalised; the member it is about, `person`) is
    about one of `named` (by name) or `persons` (by user id): its subject is, or its
    text names them in person (not only as whose relative it speaks of)."""
    return (
        (person is not None and person in persons)
        or subject in named
        or any(language.mentions_in_person(text, name) for name in named)
    )


NO_ONE_ELSE = frozenset({"group", "bot", "thing"})
"""Subject kinds that are no member: such a memory is never about "someone else"."""


def someone_else(subject: str, kind: str | None) -> bool:
    """A memory not about the person asked about could be about another member: its
    subject is none of the chat, the bot or a thing."""
    return subject not in NOT_PEOPLE and kind not in NO_ONE_ELSE


def lone(term: str) -> bool:
    """A term of one CJK character (the index holds bigrams: it has no frequency)."""
    return len(term) == 1 and is_cjk(term)


@lru_cache(maxsize=1 << 14)
def said_in(text: str) -> frozenset[str]:
    """The stems of a text's terms: an English word in any regular inflection
    ("moved", "moving") states the question's "move"."""
    return frozenset(language.stem(t) for t in token_set(text))


def any_vector(rows: Rows) -> bool:
    """Some candidate of these rows has a vector (the dense model may decide)."""
    return bool(len(rows) and (rows[:, FEATURES.index("no_vector")] == 0).any())


def rows(
    q: Question, seen: Sequence[Seen], baseline: Baseline, heard: frozenset[str] | None = None
) -> Rows:
    """One row of FEATURES per candidate. `heard`: the question's terms some memory of
    the chat uses (None: all of them); a one-character word always counts."""
    terms = q.terms if heard is None else q.terms & (heard | {t for t in q.terms if lone(t)})
    kind = q.asks if q.asks in ("time", "number", "place", "name") else None
    out = np.zeros((len(seen), len(FEATURES)), dtype=np.float64)
    for i, s in enumerate(seen):
        said = said_in(f"{s.subject} {s.content}")
        text = normalise(s.content)
        subject = normalise(s.subject)
        about = is_about(subject, text, q.named, s.person, q.persons)
        stated = kind is not None and language.states(text, kind, s.content)
        stated_terms = sum(1 for t in terms if states_term(t, said, text))
        covered = stated_terms / len(terms) if terms else 0.0
        unsaid = len(terms) - stated_terms
        cosine = s.dense or 0.0
        values = {
            "dense": cosine,
            "dense_bg": cosine - baseline.mean if s.dense is not None and baseline.known else 0.0,
            "dense_latin": cosine * q.latin,
            "no_vector": float(s.dense is None),
            "cover": covered,
            "unsaid": min(unsaid, UNSAID_CAP) / UNSAID_CAP,
            "q_terms": math.log1p(len(terms)),
            "no_terms": float(not q.terms),
            "names_subject": float(bool(q.named) and about),
            "names_other": float(bool(q.named) and not about and someone_else(subject, s.kind)),
            "kind_stated": float(stated),
            "kind_missing": float(kind is not None and not stated),
            "name_stated": float(kind == "name" and stated and stated_terms == len(terms)),
            "unit_missing": float(q.unit is not None and not language.counts_in(text, q.unit)),
            "money_missing": float(q.money and not language.money_stated(text)),
            "focus_missing": float(q.focus is not None and q.focus not in text),
            "short": float(len(said) <= SHORT_TERMS),
            "latin": q.latin,
            "ended_asked": float(s.ended and q.retrospective),
            "via_link": float(s.via == "link"),
            "via_successor": float(s.via == "successor"),
            "dated": float(s.dated),
        }
        out[i] = [values[name] for name in FEATURES]
    return out


def unrelated(q: Question, baseline: Baseline, heard: frozenset[str] | None = None) -> Rows:
    """The features of a memory with nothing in common with the question (no term, no
    name, no answer of the kind asked, an ordinary cosine): what an explanation of a
    memory's P is measured against, so it names only what moved this one."""
    ordinary = Seen(
        subject="group",
        content="",
        ended=False,
        dense=baseline.mean if baseline.known else None,
        dense_rank=None,
        bm25_rank=None,
    )
    row = rows(q, [ordinary], baseline, heard)[0]
    row[FEATURES.index("short")] = 0.0
    return row
