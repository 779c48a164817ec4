"""The seam between recall and dense retrieval (memory_core/vectors implements it).

Recall passes the ids the visibility rule allows; the implementation scores the
question against the stored vectors of exactly those memories of that chat and
nothing else. It must never raise for ordinary failures (no index yet, a model that
will not load): it returns None and recall goes on with its other signals.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memory_core.settings import VectorMode

GUESS_LABEL = "可能是猜的：相关度不高，可能对错了人或事，还没确认"
"""Shown with a memory whose relevance is in the uncertain band, so the model treats
it as a guess, not a fact it remembers."""


@dataclass(frozen=True, slots=True)
class DenseScores:
    ids: npt.NDArray[np.int64]
    """Memory ids (of the asked chat, among the allowed ones, that have a vector)."""
    scores: npt.NDArray[np.float32]
    """Cosine of the question with each, same order."""


@runtime_checkable
class DenseSearch(Protocol):
    @property
    def mode(self) -> VectorMode:
        """on | shadow | off; read on every question."""
        ...

    @property
    def embedder_id(self) -> str: ...

    async def scores(
        self, scope: str, text: str, candidate_ids: AbstractSet[int]
    ) -> DenseScores | None: ...
