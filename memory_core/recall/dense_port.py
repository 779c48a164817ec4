"""The seam between recall and dense retrieval (memory_core/vectors implements it).

Recall passes the ids the visibility rule allows; the implementation scores the
question against the stored vectors of exactly those memories of that chat and
nothing else. It must never raise for ordinary failures (no index yet, a model that
will not load): it returns None and recall goes on with its other signals.
"""

from __future__ import annotations

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
    """Memory ids (of the asked chat, among the allowed ones, that have a vector)."""
    scores: npt.NDArray[np.float32]
    """Cosine of the question with each, same order."""
    background: float | None = None
    """The question's mean cosine with a fixed background of ordinary memories
    (`background_texts`), or None when it could not be computed."""


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

    async def scores(
        self, scope: str, text: str, candidate_ids: AbstractSet[int]
    ) -> DenseScores | None: ...


@runtime_checkable
class MessageDense(Protocol):
    """Dense scores of a chat's recent messages (their vectors are computed in the
    background, memory_core/vectors/messages.py). Same contract as `DenseSearch`:
    None for any ordinary failure, never another chat's message."""

    async def message_scores(
        self, scope: str, text: str, after_id: int, before_id: int
    ) -> DenseScores | None:
        """The question against every stored vector of `scope`'s messages with an id
        strictly between `after_id` and `before_id`."""
        ...
