"""The vector rows on a PostgreSQL server with pgvector: a chat of at most `exact_max`
vectors is scored exactly in process (as `TablePlace` does, so recall is the same as
on SQLite); a larger chat is never read into the process. Its question goes to the
HNSW index for the nearest rows, and to an exact `<=>` for any other memory recall
asks about (storage/vectors/pgvector.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memory_core.clock import Clock
from memory_core.storage import PgvectorRepo
from memory_core.storage.engine import Database

from .embedder import Matrix
from .place import ChatSearch, TablePlace, as_index
from .store import VectorIndex

EXACT_MAX = 20_000
"""A chat with more vectors than this is searched by the HNSW index. At 20k x 384
float32 one exact product costs a few milliseconds (store.dot_rows) and the chat's
matrix 30 MB in every process; above it the index answers in about the same time
without holding the rows."""

NEAREST = 100
"""Rows asked of the HNSW index per question: recall ranks the top `2 * dense_limit`
(RecallParams.dense_limit, 30) and drops ids it may not see, so this leaves headroom."""


class PgvectorPlace(TablePlace):
    def __init__(
        self, db: Database, clock: Clock, *, exact_max: int = EXACT_MAX, nearest: int = NEAREST
    ) -> None:
        super().__init__(db, clock)
        self.search = PgvectorRepo(db)
        self.exact_max = exact_max
        self.nearest_k = nearest
        self.description = (
            f"in the database (memory_vectors, pgvector HNSW for a chat over {exact_max}"
            " vectors; exact in process below)"
        )
        self._large: dict[str, frozenset[str]] = {}
        self._dim: dict[str, int] = {}

    async def scored(self, model_id: str) -> VectorIndex | None:
        large = await self.search.large_scopes(model_id, self.exact_max)
        index = as_index(model_id, *await self.repo.rows(model_id, leave_out=large))
        if index is not None:
            self._large[model_id] = large
            self._dim[model_id] = index.dim
        return index

    def is_large(self, model_id: str, scope: str) -> bool:
        """Whether the last `scored` left this chat to the database."""
        return scope in self._large.get(model_id, frozenset())

    def searched(self, model_id: str, scope: str) -> ChatSearch | None:
        return _LargeChat(self, model_id, scope) if self.is_large(model_id, scope) else None

    async def nearest(
        self, model_id: str, scope: str, query: Matrix, allowed: frozenset[int]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """The HNSW index's nearest rows of the chat among `allowed`, ids ascending."""
        found = await self.search.nearest(
            model_id, scope, self._dim[model_id], query, self.nearest_k
        )
        kept = sorted((mid, cos) for mid, cos in found if mid in allowed)
        ids = np.fromiter((mid for mid, _ in kept), np.int64, len(kept))
        return ids, np.fromiter((cos for _, cos in kept), np.float32, len(kept))

    async def cosines(
        self, model_id: str, scope: str, query: Matrix, ids: Sequence[int]
    ) -> dict[int, float]:
        return dict(await self.search.cosines(model_id, scope, query, ids))


@dataclass(frozen=True, slots=True)
class _LargeChat:
    place: PgvectorPlace
    model_id: str
    scope: str

    async def nearest(
        self, query: Matrix, allowed: frozenset[int]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        return await self.place.nearest(self.model_id, self.scope, query, allowed)

    async def cosines(self, query: Matrix, ids: Sequence[int]) -> dict[int, float]:
        return await self.place.cosines(self.model_id, self.scope, query, ids)
