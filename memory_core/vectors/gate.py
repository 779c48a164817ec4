"""The gate of the vector side path (SPEC.md §8.5), as a pure function.

A vector guess is the least trustworthy thing recall can inject, so it must clear
every bar, in this order:

1. the question asks something (intent) about someone this chat knows (subject);
   every particular thing it names ("老王家大黄", "哪家公司") is one this chat has
   named too, in those words or a synonym: of a thing the chat never heard of (it
   lives in another chat, or nowhere) nothing here can speak, and the vector, which
   only sees "something about 老王", would pick another of 老王's things; and the
   best candidate's vector was made from its current version;
2. the best candidate shares no content word with the question — if it did, the
   lexical stages have already weighed that memory and said nothing, and a vector
   must not overrule them: the side path exists for questions that share *no*
   words with the memory that answers them;
3. it states the kind of answer asked for (recall's answer-type rule: "多少钱" is not
   answered by a memory without an amount);
4. its score reaches the model's threshold;
5. it stands out from the pool it was picked from (`noise_ceiling`): the threshold is
   calibrated on chats with a handful of memories per person, but after months a
   person has hundreds, and the luckiest of hundreds of unrelated memories reaches
   it by chance;
6. it leads the runner-up by at least the margin (a near tie is a coin toss).

At most one memory comes out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from memory_core.recall import ranking
from memory_core.recall.vector_port import VectorGuess

from .embedder import Calibration
from .text import QuestionShape


@dataclass(frozen=True, slots=True)
class Scored:
    memory_id: int
    score: float
    shares_terms: bool
    """The memory's text has a content term of the question."""
    answers: bool = True
    """It states the kind of thing asked for (a number for 多少, a date for 哪天...)."""
    stale: bool = False
    """The memory changed since its vector was computed (`yuji embed` has not run yet)."""


MIN_POOL = 30
"""Below this many candidates a pool's spread says too little to judge an outlier by
(with 4 candidates no score can lie even 1.6 deviations above their mean)."""


@dataclass(frozen=True, slots=True)
class Pool:
    """How the scores of all the candidates a guess was picked from are spread."""

    n: int = 0
    mean: float = 0.0
    std: float = 0.0

    @classmethod
    def of(cls, scores: npt.NDArray[np.floating]) -> Pool:
        if not len(scores):
            return cls()
        return cls(len(scores), float(np.mean(scores)), float(np.std(scores)))


def noise_ceiling(pool: Pool) -> float:
    """The score the best of `pool` must exceed to be more than the luckiest of n
    unrelated memories: the maximum of n draws of noise rarely lies more than
    sqrt(2 ln n) deviations above their mean. -inf for pools too small to tell."""
    if pool.n < MIN_POOL:
        return -math.inf
    return pool.mean + pool.std * math.sqrt(2 * math.log(pool.n))


@dataclass(frozen=True, slots=True)
class GateDecision:
    guess: VectorGuess | None
    reason: str
    best: Scored | None = None
    """The top candidate, also when refused (shadow logs and the sweep use it)."""
    margin: float = 0.0


def restatement_groups(ranked: Sequence[Scored], texts: Mapping[int, str]) -> list[list[Scored]]:
    """`ranked` (best first) grouped by recall's same-memory test, each group best
    first, groups in the order of their best."""
    said = {s.memory_id: ranking.Said.of(texts.get(s.memory_id, "")) for s in ranked}
    return ranking.restatement_groups(ranked, lambda s: said[s.memory_id])


def one_per_restatement(groups: Sequence[Sequence[Scored]]) -> list[Scored]:
    """Each group of memories restating one another as one: its earliest memory, the
    first statement, which is the one recall shows, with the group's best score. A
    runner-up that restates the leader is the same fact again, not a rival."""
    return [replace(min(g, key=lambda s: s.memory_id), score=g[0].score) for g in groups]


def rank(scored: Sequence[Scored]) -> list[Scored]:
    """Best first; ties broken by the lower (older) memory id, so order is total."""
    return sorted(scored, key=lambda s: (-s.score, s.memory_id))


def decide(
    shape: QuestionShape,
    scored: Sequence[Scored],
    calibration: Calibration,
    pool: Pool | None = None,
) -> GateDecision:
    if not shape.has_intent:
        return GateDecision(None, "no question intent")
    if not shape.has_subject:
        return GateDecision(None, "no clear subject")
    if shape.unheard:
        return GateDecision(None, f"asks about {'/'.join(sorted(shape.unheard))}: never named here")
    ranked = rank(scored)
    if not ranked:
        return GateDecision(None, "no indexed candidate")
    best = ranked[0]
    runner_up = ranked[1].score if len(ranked) > 1 else 0.0
    margin = best.score - runner_up
    if best.stale:
        return GateDecision(None, "indexed vector is stale", best, margin)
    if best.shares_terms:
        return GateDecision(
            None, "best candidate shares words: lexical stages decide", best, margin
        )
    if not best.answers:
        return GateDecision(None, "best candidate cannot give the answer asked", best, margin)
    if best.score < calibration.threshold:
        return GateDecision(None, f"score {best.score:.3f} below threshold", best, margin)
    ceiling = noise_ceiling(pool or Pool())
    if best.score <= ceiling:
        return GateDecision(
            None,
            f"score {best.score:.3f} within the noise of its pool (up to {ceiling:.3f})",
            best,
            margin,
        )
    if margin < calibration.margin:
        return GateDecision(None, f"margin {margin:.3f} below {calibration.margin}", best, margin)
    return GateDecision(
        VectorGuess(memory_id=best.memory_id, score=best.score, margin=margin),
        "guess",
        best,
        margin,
    )
