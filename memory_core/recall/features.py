"""The features of one (question, memory) pair that the relevance model reads (pure).

Each says something general about whether a memory answers a question, never about a
particular phrase:

- dense:      cosine of the question and the memory under the embedding model, its
              z-score among every visible memory of the chat (does it stand out?),
              its distance from the best candidate, and 1/(1 + rank);
- words:      the IDF-weighted share of the question's content terms the memory
              states, its distance from the best-covered candidate, 1/(1 + bm25 rank),
              and the share of the question's terms this chat has never used at all
              (a question about something nobody mentioned has no answer here);
- people:     the question names the memory's subject (or a member the memory
              mentions), or names members and the memory is about someone else;
- answer:     the question asks for a time, number or place and the memory states
              one, or states none;
- time:       the memory's validity has ended (seen only by questions about the past,
              or reached through the supersede chain), and which path found it.

`MONOTONE` gives the direction each feature may move P in; training keeps the
weights to it, so more evidence never lowers P (a property test holds it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
import numpy.typing as npt

from memory_core.tokenize import normalise, token_set

from . import language
from .question import NOT_PEOPLE, Question

Via = Literal["search", "link", "successor"]

FEATURES: tuple[str, ...] = (
    "dense",
    "dense_z",
    "dense_gap",
    "dense_rr",
    "no_vector",
    "cover",
    "cover_gap",
    "bm25_rr",
    "unheard",
    "no_terms",
    "names_subject",
    "names_other",
    "kind_stated",
    "kind_missing",
    "unit_missing",
    "money_missing",
    "focus_missing",
    "uncovered_max",
    "dense_lead",
    "dense_over",
    "latin",
    "ended_asked",
    "via_link",
    "via_successor",
)
DENSE_FEATURES = frozenset(
    {"dense", "dense_z", "dense_gap", "dense_rr", "no_vector", "dense_lead", "dense_over"}
)
MONOTONE: dict[str, int] = {
    "dense": 1,
    "dense_z": 1,
    "dense_gap": 1,
    "dense_rr": 1,
    "cover": 1,
    "cover_gap": 1,
    "bm25_rr": 1,
    "unheard": -1,
    "names_subject": 1,
    "names_other": -1,
    "kind_stated": 1,
    "kind_missing": -1,
    "unit_missing": -1,
    "money_missing": -1,
    "focus_missing": -1,
    "uncovered_max": -1,
    "dense_lead": 1,
    "dense_over": 1,
}
"""+1: a larger value never lowers P; -1: never raises it. Others are free."""

Rows = npt.NDArray[np.float64]
MIN_SPREAD_SAMPLE = 8
SD_FLOOR = 0.01
"""e5's cosines sit in a narrow band: a chat of near-identical memories must not turn
a hair's difference into a large z-score."""


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


@dataclass(frozen=True, slots=True)
class Spread:
    """The question's cosine with every visible memory of the chat."""

    mean: float = 0.0
    sd: float = 0.0

    @classmethod
    def of(cls, scores: npt.NDArray[np.floating]) -> Spread:
        """Too few memories say nothing about how a chat's cosines spread: below
        MIN_SPREAD_SAMPLE the z-score stays 0."""
        if len(scores) < MIN_SPREAD_SAMPLE:
            return cls()
        return cls(float(np.mean(scores)), max(float(np.std(scores)), SD_FLOOR))


def idf(n: int, df: int) -> float:
    """Rarity of a term in this chat (a term no memory has is as rare as can be)."""
    return math.log((n + 1) / (df + 0.5))


def cover(terms: frozenset[str], weights: Mapping[str, float], said: frozenset[str]) -> float:
    """The IDF-weighted share of the terms `said` (a text's stems, `said_in`) states.
    Only terms this chat has used count: one no memory holds cannot be covered by any
    (`unheard` says so)."""
    total = sum(weights[t] for t in terms)
    if total <= 0:
        return 0.0
    return sum(weights[t] for t in terms if language.stem(t) in said) / total


@lru_cache(maxsize=1 << 14)
def said_in(text: str) -> frozenset[str]:
    """The stems of a text's terms: an English word in any regular inflection
    ("moved", "moving") states the question's "move"."""
    return frozenset(language.stem(t) for t in token_set(text))


def rows(
    q: Question,
    seen: Sequence[Seen],
    spread: Spread,
    weights: Mapping[str, float],
    unheard: float,
) -> Rows:
    """One row of FEATURES per candidate. `weights`: the IDF in this chat of each
    question term some memory uses; `unheard`: the IDF-weighted share of the terms no
    memory here uses."""
    said = [said_in(f"{s.subject} {s.content}") for s in seen]
    heard = frozenset(t for t in q.terms if t in weights)  # terms some memory here uses
    covers = [cover(heard, weights, t) for t in said]
    best_cover = max(covers, default=0.0)
    cosines = sorted((s.dense for s in seen if s.dense is not None), reverse=True)
    best_dense = cosines[0] if cosines else 0.0
    runner_up = cosines[1] if len(cosines) > 1 else best_dense
    top_weight = max(weights.values(), default=0.0) or 1.0
    out = np.zeros((len(seen), len(FEATURES)), dtype=np.float64)
    for i, s in enumerate(seen):
        text = normalise(s.content)
        subject = normalise(s.subject)
        about = subject in q.named or any(language.mentions(text, name) for name in q.named)
        kind = q.asks if q.asks in ("time", "number", "place") else None
        stated = kind is not None and language.states(text, kind, s.content)
        values = {
            "dense": s.dense or 0.0,
            "dense_z": _z(s.dense, spread),
            "dense_gap": (s.dense - best_dense) if s.dense is not None else -1.0,
            "dense_rr": 1.0 / (1 + s.dense_rank) if s.dense_rank is not None else 0.0,
            "no_vector": float(s.dense is None),
            "cover": covers[i],
            "cover_gap": covers[i] - best_cover,
            "bm25_rr": 1.0 / (1 + s.bm25_rank) if s.bm25_rank is not None else 0.0,
            "unheard": unheard,
            "no_terms": float(not q.terms),
            "names_subject": float(bool(q.named) and about),
            "names_other": float(bool(q.named) and not about and subject not in NOT_PEOPLE),
            "kind_stated": float(stated),
            "kind_missing": float(kind is not None and not stated),
            "unit_missing": float(q.unit is not None and not language.counts_in(text, q.unit)),
            "money_missing": float(q.money and not language.money_stated(text)),
            "focus_missing": float(q.focus is not None and q.focus not in text),
            "uncovered_max": max(
                (weights[t] for t in heard if language.stem(t) not in said[i]), default=0.0
            )
            / top_weight,
            "dense_lead": _lead(s.dense, best_dense, runner_up),
            "dense_over": (s.dense - spread.mean) if s.dense is not None and spread.sd else 0.0,
            "latin": q.latin,
            "ended_asked": float(s.ended and q.retrospective),
            "via_link": float(s.via == "link"),
            "via_successor": float(s.via == "successor"),
        }
        out[i] = [values[name] for name in FEATURES]
    return out


def _lead(score: float | None, best: float, runner_up: float) -> float:
    """How far this candidate's cosine is ahead of the best other one (negative when
    behind)."""
    if score is None:
        return -1.0
    return score - (runner_up if score >= best else best)


def _z(score: float | None, spread: Spread) -> float:
    if score is None or spread.sd <= 1e-6:
        return 0.0
    return max(-5.0, min(8.0, (score - spread.mean) / spread.sd))
