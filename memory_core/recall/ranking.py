"""Final ordering of recalled memories (pure; `now` is passed in).

Order by the relevance model's P lifted a little by importance, recency of last
access, credited hits and a star;
pick greedily with maximal marginal relevance so near-identical memories don't
fill the slots, and keep contradicting memories next to each other.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from memory_core.tokenize import is_cjk, normalise, numbers, token_set
from memory_core.types import Band, Memory, Stage

from . import language

T = TypeVar("T")

RECENCY_HALF_LIFE_DAYS = 30.0
_LATIN_WORD = re.compile(r"[a-z0-9]+")
SAME_MEMORY_DICE = 0.7
"""Candidates this similar (and stating the same numbers) say the same thing twice."""


@dataclass(frozen=True, slots=True)
class Said:
    """What the same-memory test compares of a text."""

    tokens: frozenset[str]
    numbers: frozenset[str]
    text: str
    """Normalised."""

    @classmethod
    def of(cls, text: str) -> Said:
        return _said(text)


@functools.lru_cache(maxsize=8192)
def _said(text: str) -> Said:
    # Cached: every recall of a chat reads the same memory texts again.
    return Said(token_set(text), numbers(text), normalise(text))


def restates(a: Said, b: Said) -> bool:
    """Whether two memory texts say the same thing twice (near-identical wording, the
    same numbers, and no word of one put where the other has another): such memories
    count once, wherever recall compares them."""
    return (
        a.numbers == b.numbers
        and dice(a.tokens, b.tokens) >= SAME_MEMORY_DICE
        and not swaps_content(a.text, b.text)
    )


def swaps_content(a: str, b: str) -> bool:
    """One text says something where the other says something else ("阿花家的猫叫年糕" /
    "…叫汤圆", "lives in Leeds" / "lives in York"): the same frame with another value
    is another fact. A word added or dropped ("现在住在") or a changed particle is the
    same fact said again. Read as: each side has a content character (CJK, not a
    particle) or a latin word the other lacks."""
    mine, theirs = _content_units(a), _content_units(b)
    return bool(mine - theirs) and bool(theirs - mine)


@functools.lru_cache(maxsize=4096)
def _content_units(text: str) -> frozenset[str]:
    # Cached: one recall compares each candidate with many, and wakes see the same texts.
    grammar = language.function_chars()
    cjk = {ch for ch in text if is_cjk(ch) and ch not in grammar}
    return frozenset(cjk | set(_LATIN_WORD.findall(text)))


def restatement_groups(best_first: Sequence[T], said: Callable[[T], Said]) -> list[list[T]]:
    """Items grouped by what they say: each joins the first group whose head (its
    best) it restates, so groups come in the order of their best."""
    saids = [said(item) for item in best_first]
    close = _close_pairs([s.tokens for s in saids])
    groups: list[list[int]] = []
    for i, mine in enumerate(saids):
        for group in groups:
            head = group[0]
            if close[i, head] and restates(mine, saids[head]):
                group.append(i)
                break
        else:
            groups.append([i])
    return [[best_first[i] for i in group] for group in groups]


def _close_pairs(token_sets: Sequence[frozenset[str]]) -> npt.NDArray[np.bool_]:
    """Which pairs may restate each other: dice of their tokens at the line or above,
    every pair at once (a recall compares each of ~100 candidates with each group)."""
    vocabulary: dict[str, int] = {}
    cells = [[vocabulary.setdefault(t, len(vocabulary)) for t in ts] for ts in token_sets]
    held = np.zeros((len(token_sets), max(len(vocabulary), 1)), dtype=np.float32)
    for row, columns in enumerate(cells):
        held[row, columns] = 1.0
    shared = held @ held.T
    sizes = held.sum(axis=1)
    # A hair below the line: `restates` decides the pairs that pass, exactly.
    return 2 * shared >= SAME_MEMORY_DICE * (sizes[:, None] + sizes[None, :]) - 1e-6


@dataclass(frozen=True, slots=True)
class Points:
    """The two operating points in effect: a candidate below `floor` is noise, one at
    or above `sure` is in the sure band. The floor never stands above the sure line,
    whatever the console sets, so a sure memory is never dropped as noise."""

    floor: float
    sure: float

    @classmethod
    def of(cls, floor: float, sure: float) -> Points:
        return cls(min(floor, sure), sure)

    def band(self, p: float) -> Band | None:
        """The band of a candidate of this P, None below the floor."""
        if p >= self.sure:
            return "sure"
        return "related" if p >= self.floor else None


@dataclass(frozen=True, slots=True)
class Candidate:
    memory: Memory
    stage: Stage
    score: float
    reason: str


@dataclass(frozen=True, slots=True)
class RankParams:
    importance: float = 0.15
    recency: float = 0.1
    hits: float = 0.05
    star: float = 0.1
    closed_boost: float = 0.5
    """Retrospective questions lift memories whose validity has ended."""
    diversity: float = 0.3
    """MMR trade-off: how much similarity to an already chosen memory costs (the
    engine takes it from YUJI_RECALL_DIVERSITY, a live tunable)."""


def recency(memory: Memory, now: datetime) -> float:
    """1.0 when just used, halving every RECENCY_HALF_LIFE_DAYS; 0 when never used."""
    if memory.last_accessed_at is None:
        return 0.0
    days = max((now - memory.last_accessed_at).total_seconds(), 0.0) / 86400
    return 0.5 ** (days / RECENCY_HALF_LIFE_DAYS)


def final_score(
    c: Candidate, now: datetime, *, retrospective: bool, params: RankParams = RankParams()
) -> float:
    m = c.memory
    lift = (
        params.importance * (m.importance - 0.5)
        + params.recency * recency(m, now)
        + params.hits * math.log1p(m.hit_count) / math.log(10)
        + params.star * m.starred
    )
    if retrospective and ((m.valid_to is not None and m.valid_to <= now) or m.status == "cold"):
        lift += params.closed_boost
    return c.score * (1.0 + lift)


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a or b else 0.0


def select(
    candidates: Sequence[Candidate],
    limit: int,
    now: datetime,
    *,
    retrospective: bool = False,
    contradicts: Mapping[int, frozenset[int]] | None = None,
    partners: Mapping[int, Candidate] | None = None,
    params: RankParams = RankParams(),
) -> list[Candidate]:
    """At most `limit` candidates by MMR over the final score; a chosen memory's
    contradicting partner (from `partners`, else from the candidates) comes right
    after it."""
    if limit <= 0:
        return []
    best: dict[int, Candidate] = {}
    for c in candidates:
        old = best.get(c.memory.id)
        if old is None or c.score > old.score:
            best[c.memory.id] = c
    scored = {
        mid: replace(c, score=final_score(c, now, retrospective=retrospective, params=params))
        for mid, c in best.items()
    }
    said = {mid: Said.of(c.memory.content) for mid, c in scored.items()}
    scored = _collapse_restatements(scored, said)
    chosen: list[Candidate] = []
    pool = sorted(scored.values(), key=lambda c: (-c.score, c.memory.id))
    # Each candidate's highest dice with a chosen one, updated as each is chosen.
    similar = dict.fromkeys(scored, 0.0)
    while pool and len(chosen) < limit:
        top = pool[0].score or 1.0

        def mmr(c: Candidate, top: float = top) -> float:
            return c.score / top - params.diversity * similar[c.memory.id]

        pick = max(pool, key=lambda c: (mmr(c), -c.memory.id))
        pool.remove(pick)
        chosen.append(pick)
        picked = said[pick.memory.id].tokens
        for c in pool:
            mid = c.memory.id
            similar[mid] = max(similar[mid], dice(said[mid].tokens, picked))
    return _pair_contradictions(chosen, {**(partners or {}), **scored}, contradicts or {}, limit)


def _collapse_restatements(
    scored: dict[int, Candidate], said: Mapping[int, Said]
) -> dict[int, Candidate]:
    """Near-identical memories (a fact written again and again) count once: the group
    is represented by its earliest memory (the first statement; later ones add nothing
    and an update would be a supersede), ranked by the group's best score."""
    best_first = sorted(scored.values(), key=lambda c: (-c.score, c.memory.id))
    groups = restatement_groups(best_first, lambda c: said[c.memory.id])
    out: dict[int, Candidate] = {}
    for group in groups:
        first = min(group, key=lambda c: (c.memory.created_at, c.memory.id))
        lead = group[0]
        reason = first.reason
        if len(group) > 1:
            reason += f"（另有{len(group) - 1}条几乎相同的记忆）"
        out[first.memory.id] = replace(first, stage=lead.stage, score=lead.score, reason=reason)
    return out


def _pair_contradictions(
    chosen: list[Candidate],
    pool: Mapping[int, Candidate],
    contradicts: Mapping[int, frozenset[int]],
    limit: int,
) -> list[Candidate]:
    """Put each chosen memory's contradicting partner right after it (if available),
    dropping the lowest-ranked unpaired memories to stay within `limit`."""
    out = list(chosen)
    for c in chosen:
        for partner_id in sorted(contradicts.get(c.memory.id, ())):
            partner = pool.get(partner_id)
            if partner is None or any(o.memory.id == partner_id for o in out):
                continue
            at = next(i for i, o in enumerate(out) if o.memory.id == c.memory.id)
            out.insert(at + 1, partner)
    while len(out) > limit:
        paired = {
            o.memory.id
            for o in out
            if any(p in {x.memory.id for x in out} for p in contradicts.get(o.memory.id, ()))
        }
        drop = next((o for o in reversed(out) if o.memory.id not in paired), out[-1])
        out.remove(drop)
    return out
