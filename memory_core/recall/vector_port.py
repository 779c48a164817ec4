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
from datetime import datetime
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


@runtime_checkable
class VectorSidePath(Protocol):
    @property
    def mode(self) -> VectorMode:
        """off | shadow | candidate; read on every call, so switching needs no restart."""
        ...

    async def guess(
        self,
        scope: str,
        text: str,
        candidate_ids: AbstractSet[int],
        now: datetime,
        *,
        conn: AsyncConnection | None = None,
        aliases: Mapping[str, str] | None = None,
    ) -> VectorGuess | None:
        """The single best guess among `candidate_ids` that clears the gates, or None.

        `conn` is the read recall is in, so the guess sees the same snapshot and opens
        no transaction of its own; `aliases` are the chat's, as recall already holds
        them (both are read when absent).

        Must never raise for ordinary failures (missing index, model not loaded):
        return None and let recall stay silent.
        """
        ...
