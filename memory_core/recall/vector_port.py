"""The seam between recall and the vector side path (SPEC.md §8.5).

Recall owns this Protocol; the vector area implements it. Recall calls `guess`
only when the lexical stages found nothing, passes the ids the visibility function
allows (the guess must be one of them, else it is dropped), and injects at most
the one memory returned, labelled `VECTOR_LABEL`, and only in mode "candidate".
In mode "shadow" the guess is logged and nothing is injected; in "off" `guess` is
never awaited.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.settings import VectorMode

VECTOR_LABEL = "向量猜的，可能对错了人或事，还没确认"
"""The reason shown with every vector guess, so the model knows it is unconfirmed."""


@dataclass(frozen=True, slots=True)
class VectorGuess:
    memory_id: int
    score: float
    """Cosine similarity of the best candidate (the gate is `vector_threshold`)."""
    margin: float
    """Lead of the best candidate over the second (the gate is `vector_margin`)."""


@dataclass(frozen=True, slots=True)
class VectorAsk:
    """One question put to the side path."""

    scope: str
    text: str
    candidate_ids: AbstractSet[int]
    """The ids the visibility rule allows here; a guess outside them is dropped."""
    conn: AsyncConnection | None = None
    """The read recall is in: the guess sees the same snapshot and opens no
    transaction of its own (one is opened when absent)."""
    aliases: Mapping[str, str] | None = None
    """The chat's aliases as recall already holds them (read when absent)."""


@runtime_checkable
class VectorSidePath(Protocol):
    @property
    def mode(self) -> VectorMode:
        """off | shadow | candidate; read on every call, so switching needs no restart."""
        ...

    async def guess(self, ask: VectorAsk) -> VectorGuess | None:
        """The single best guess among `ask.candidate_ids` that clears the gates, or
        None.

        Must never raise for ordinary failures (missing index, model not loaded):
        return None and let recall stay silent.
        """
        ...
