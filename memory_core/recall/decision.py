"""The decision of one wake (pure): from its candidates with their features
(`Explained`, what `Recall.explain` found), the memories to inject, each in its band.

The best by P fused with the hybrid's order as far as the wake's depth trusts P
(fusion.py), above the floor (the hybrid's own top is never dropped when P is out of
its depth), then ranking.py (MMR, restatements once, contradicting memories side by
side); a memory below the sure line is labelled as a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np
import numpy.typing as npt

from memory_core.tokenize import normalise
from memory_core.types import Band, Memory, Recalled, Stage

from . import features, fusion
from .dense_port import RELATED_LABEL
from .features import FEATURES, Baseline, Seen
from .question import Names, Question
from .ranking import Candidate, Points, RankParams, select
from .relevance import RelevanceModel
from .wake import Wake
from .why import reason

DENSE = "dense"


@dataclass(frozen=True)
class Explained:
    """Everything recall weighed for one question (for training, /why and tests)."""

    question: Question
    memories: tuple[Memory, ...]
    seen: tuple[Seen, ...]
    rows: np.ndarray
    contradicts: Mapping[int, frozenset[int]]
    trace: tuple[str, ...]
    wake: Wake
    hybrid: npt.NDArray[np.int64]
    """Each candidate's rank in the plain hybrid order (fusion.py)."""
    hybrid_words: npt.NDArray[np.int64]
    """The same without the dense order (for the words-only model: vector mode off or
    shadow, or no candidate embedded yet)."""
    names: Names = field(default_factory=lambda: Names.of([], {}, ()))
    baseline: Baseline = field(default_factory=Baseline)
    unrelated: npt.NDArray[np.float64] | None = None
    """The features of a memory with nothing in common (what /why measures against)."""
    small_talk: bool = False
    """A wake leaning on the turns before it, which are near nothing the chat
    remembers (chatter.below_the_chat): it asks about nothing."""
    shares_a_word: bool = False
    """Some memory of the chat holds a word of the wake or of the turns before it, or
    the member it names: it mentions something remembered. A time word alone does not
    count ("终于周五了" names the day; the day's memories are found as dated ones)."""


def choose(
    ex: Explained,
    model: RelevanceModel,
    points: Points,
    now: datetime,
    limit: int,
    ranking: RankParams,
) -> tuple[Recalled, ...]:
    """At most `limit` memories of `ex` by `model`'s P and the hybrid's order, each
    in its band (the caller has ruled out a wake that asks about nothing)."""
    if not ex.memories or limit <= 0:
        return ()
    rows = ex.rows
    p = model.p(rows)
    depth = ex.wake.depth
    hybrid = ex.hybrid if DENSE in model.features else ex.hybrid_words
    order = fusion.fused(p, hybrid, depth)
    floor_free = fusion.kept_by_hybrid(hybrid, depth, limit)
    pool = {
        mem.id: Candidate(mem, _stage(s), float(oi), "")
        for mem, s, oi in zip(ex.memories, ex.seen, order, strict=True)
    }
    passing = [
        c
        for c, pi, free in zip(pool.values(), p, floor_free, strict=True)
        if free or points.band(float(pi)) is not None
    ]
    chosen = select(
        passing,
        limit,
        now,
        retrospective=ex.question.retrospective,
        contradicts=ex.contradicts,
        partners=pool,
        params=ranking,
    )
    index = {mem.id: i for i, mem in enumerate(ex.memories)}
    others = never_sure(ex)
    out: list[Recalled] = []
    for c in chosen:
        i = index[c.memory.id]
        top = model.strongest(rows[i], against=ex.unrelated)
        # below the floor: a contradicting partner, or the hybrid's own top
        band: Band = points.band(float(p[i])) or "related"
        if c.memory.id in others:
            band = "related"
        out.append(
            Recalled(
                memory=c.memory,
                stage=c.stage,
                score=round(float(p[i]), 4),
                reason=reason(float(p[i]), top, c.memory, now, band, ex.question.latin),
                band=band,
                why=top,
            )
        )
    return tuple(out)


TRUSTED_ORIGINS = frozenset({"admin", "console", "migrated"})
"""Who wrote a memory the chat's operator vouches for (`/remember`, the console, a
fact import): its word is theirs, whoever its evidence came from."""


def never_sure(ex: Explained) -> frozenset[int]:
    """The candidates recall may not call `sure`: about someone else than the wake is
    about (`about_someone_else`), or hearsay (`hearsay`)."""
    return about_someone_else(ex) | hearsay(ex.memories)


def hearsay(memories: Sequence[Memory]) -> frozenset[int]:
    """The memories about a member that rest on no word of theirs (only what others
    said of them), unless the operator vouched for them: a member cannot make the
    persona state things about someone else by saying them."""
    return frozenset(
        mem.id for mem in memories if mem.word == "hearsay" and mem.origin not in TRUSTED_ORIGINS
    )


def about_someone_else(ex: Explained) -> frozenset[int]:
    """The candidates about a member other than everyone the wake is about (the sender
    of a first-person wake, whom it names): never `sure`, whatever P, the reranker or
    the judge say. A wake about nobody in particular leaves every band as it is; a
    memory about the group, the bot or nobody is no one else."""
    if ex.question.named:
        column = FEATURES.index("names_other")
        return frozenset(
            mem.id for mem, row in zip(ex.memories, ex.rows, strict=True) if row[column] > 0
        )
    # A pronoun pointing back ("她老家哪的") is about whom the turns before named: that
    # only narrows the sure band (context never raises P).
    named = ex.wake.about
    return frozenset(
        mem.id
        for mem in ex.memories
        if named
        and not is_about(mem, named)
        and features.someone_else(normalise(mem.subject), mem.subject_kind)
    )


def is_about(memory: Memory, named: frozenset[str], persons: frozenset[str] = frozenset()) -> bool:
    """The memory is about one of `named` or `persons` (features.is_about)."""
    return features.is_about(
        normalise(memory.subject),
        normalise(memory.content),
        named,
        memory.subject_person,
        persons,
    )


def capped(items: tuple[Recalled, ...], others: frozenset[int]) -> tuple[Recalled, ...]:
    """`items` with any of `others` (`never_sure`) in the related band."""
    return tuple(
        replace(item, band="related", reason=f"{RELATED_LABEL}（{item.reason}）")
        if item.band == "sure" and item.memory.id in others
        else item
        for item in items
    )


def _stage(s: Seen) -> Stage:
    if s.via in ("link", "successor"):
        return "graph"
    return "lexical" if s.bm25_rank is not None else "vector"
