"""The seam between recall and dense retrieval (memory_core/vectors implements it).

Recall passes the ids the visibility rule allows; the implementation scores the
question against the stored vectors of exactly those memories of that chat and
nothing else. It must never raise for ordinary failures (no index yet, a model that
will not load): it returns None and recall goes on with its other signals.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from importlib import resources
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memory_core.settings import VectorMode

RELATED_LABEL = "仅供参考：可能说的是别的人或别的事，不能当成事实"
"""Shown with a memory in the `related` band (P below the sure line), so the model
never states it as a fact it remembers."""


@dataclass(frozen=True, slots=True)
class DenseScores:
    ids: npt.NDArray[np.int64]
    """Memory ids (of the asked chat, among the allowed ones, that have a vector);
    message ids (`MessageDense`) are ascending."""
    scores: npt.NDArray[np.float32]
    """Cosine of the question with each, same order."""
    background: float | None = None
    """The question's mean cosine with a fixed background of ordinary memories
    (`background_texts`), or None when it could not be computed."""
    complete: bool = True
    """Every allowed id with a vector is here. False: only the nearest ones (a chat
    searched by an approximate index in the database); `DenseSearch.cosines` gives
    the cosine of any other."""
    note: str = ""
    """Why there are no scores (the question's embedding timed out, ...): for the trace."""


def background_texts() -> tuple[str, ...]:
    """The fixed background every question is compared with (data/background.txt)."""
    text = (
        resources.files("memory_core.recall")
        .joinpath("data", "background.txt")
        .read_text(encoding="utf-8")
    )
    return tuple(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


@runtime_checkable
class DenseSearch(Protocol):
    @property
    def mode(self) -> VectorMode:
        """on | shadow | off; read on every question."""
        ...

    @property
    def embedder_id(self) -> str: ...

    def prefetch(self, text: str) -> None:
        """Start computing what `scores` and `cosines` of `text` will need (its vector),
        so it overlaps the word search; never raises."""
        ...

    async def scores(
        self, scope: str, text: str, candidate_ids: AbstractSet[int]
    ) -> DenseScores | None: ...

    async def cosines(self, scope: str, text: str, ids: Sequence[int]) -> dict[int, float]:
        """The question's cosine with each of these memories of `scope` that has a
        vector (what an incomplete `DenseScores` left out); {} on any failure."""
        ...


@runtime_checkable
class MessageDense(Protocol):
    """Dense scores of a chat's recent messages (their vectors are computed in the
    background, memory_core/vectors/messages.py). Same contract as `DenseSearch`:
    None for any ordinary failure, never another chat's message."""

    async def message_scores(
        self, scope: str, text: str, after_id: int, before_id: int
    ) -> DenseScores | None:
        """The question against every stored vector of `scope`'s messages with an id
        strictly between `after_id` and `before_id`, ids ascending."""
        ...


def best_first(
    ids: npt.NDArray[np.int64], scores: npt.NDArray[np.floating], k: int
) -> npt.NDArray[np.intp]:
    """Positions of the `k` best scores, best first, ties by ascending id: exactly
    `np.lexsort((ids, -scores))[:k]`, without sorting all of them (a chat's tens of
    thousands of messages for its top thirty)."""
    n = len(scores)
    if k <= 0 or n == 0:
        return np.zeros(0, dtype=np.intp)
    negated = -np.asarray(scores)
    if k >= n:
        return np.lexsort((ids, negated))
    kth = negated[np.argpartition(negated, k - 1)[k - 1]]
    if np.isnan(kth):  # NaN scores reach the top k: the full sort places them
        return np.lexsort((ids, negated))[:k]
    # Every score at least the k-th best, tie included, in their original order (so
    # the stable sort orders them as the full one does); the k-th best never is NaN.
    near = np.flatnonzero(negated <= kth)
    return near[np.lexsort((ids[near], negated[near]))[:k]]


def scores_of(
    ids: npt.NDArray[np.int64], scores: npt.NDArray[np.floating], wanted: Sequence[int]
) -> dict[int, float]:
    """The score of each wanted id present in `ids` (ascending, no duplicates)."""
    if not wanted or not len(ids):
        return {}
    asked = np.asarray(wanted, dtype=np.int64)
    at = np.minimum(np.searchsorted(ids, asked), len(ids) - 1)
    hit = ids[at] == asked
    return {int(i): float(s) for i, s in zip(asked[hit], np.asarray(scores)[at[hit]], strict=True)}
