"""Dense retrieval for recall (implements `memory_core.recall.dense_port.DenseSearch`).

The bot process only embeds questions: memory vectors come from the index `yuji
embed` writes in a separate process (a file, or rows on PostgreSQL: place.py),
re-read whenever a build replaced it. The
model loads on the first question, once, off the event loop, and every question is
embedded off the event loop too. Nothing here raises into recall: a missing index or
an unloadable model end in None, and recall answers from its other signals.

With an embeddings API (`YUJI_EMBED_BASE_URL`) a question waits at most
`YUJI_EMBED_TIMEOUT_S` for its vector; past it, or when the API fails, the scores are
empty with a `note` the trace shows, and recall answers by words. A model whose index
is not built yet (just switched: `yuji embed` is writing it in the background) gives
the same: words only until the new index is complete, then dense again at once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet

import numpy as np

from memory_core.errors import LLMError
from memory_core.providers import Record
from memory_core.recall.dense_port import DenseScores, background_texts
from memory_core.settings import Settings, VectorMode

from .embedder import Embedder, Matrix
from .factory import embedder_from_settings
from .place import FolderPlace, IndexPlace
from .store import VectorIndex

log = logging.getLogger(__name__)

QUESTIONS_KEPT = 32
"""Question vectors kept (the last texts asked): a wake read with its context embeds
each turn once, and the turns before a wake were often wakes (or context) before."""
MISSED_FOR_S = 10.0
"""A question whose embedding just failed is not sent again for this long."""


class Dense:
    def __init__(
        self,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        embedder_factory: Callable[[Settings], Embedder] | None = None,
        place: IndexPlace | None = None,
        record: Record | None = None,
    ) -> None:
        self._settings = settings
        self._question_timeout_s = settings.embed_timeout_s if settings.embed_api else None
        """Only a provider's API gets a deadline: a local model's first question loads it."""
        self.place: IndexPlace = place or FolderPlace(settings.vectors_dir)
        self._mode: VectorMode = settings.vector_mode
        self._embedder = embedder
        self._factory: Callable[[Settings], Embedder] = embedder_factory or (
            lambda s: embedder_from_settings(s, record)
        )
        self._index: VectorIndex | None = None
        self._index_stamp: object | None = None
        self._failed = False
        self._background: Matrix | None = None
        self._questions: dict[str, tuple[Matrix, float]] = {}
        self._missed: dict[str, float] = {}
        """The last few questions whose embedding failed or was too slow."""
        self._pending: dict[str, asyncio.Task[tuple[Matrix, float]]] = {}
        """Questions being embedded now (`prefetch`): a second ask waits for the same."""

    @property
    def mode(self) -> VectorMode:
        return self._mode

    @property
    def vector_store(self) -> str:
        """Where the vectors live, as `yuji status` says it (place.py names them)."""
        return self.place.description

    def set_mode(self, mode: VectorMode) -> None:
        self._mode = mode

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._factory(self._settings)
        return self._embedder

    @property
    def embedder_id(self) -> str:
        return self.embedder.model_id

    async def index(self) -> VectorIndex | None:
        """The current index of this model, re-read when a build replaced it."""
        model_id = self.embedder.model_id
        stamp = await self.place.stamp(model_id)
        if stamp is None:
            self._index, self._index_stamp = None, None
            return None
        if stamp != self._index_stamp:
            self._index = await self.place.scored(model_id)
            self._index_stamp = stamp if self._index is not None else None
        return self._index

    def _embed_question(self, text: str) -> tuple[Matrix, float]:
        """The question's vector and its mean cosine with the background (embedded
        once per process, on the first question, in the same worker thread)."""
        if self._background is None:
            self._background = self.embedder.embed(list(background_texts()))
        query = self.embedder.embed_query(text)
        return query, float(np.mean(self._background @ query))

    def prefetch(self, text: str) -> None:
        """Start embedding `text` now, off the event loop: recall reads its words from
        the store meanwhile and asks for the vector later (the model's forward pass
        releases the GIL, so the two overlap)."""
        if self._index is None:
            return  # no index yet (or not read yet): the vector may never be needed
        if text in self._questions or text in self._pending or self._missed_recently(text):
            return
        self._start(text)

    def _start(self, text: str) -> asyncio.Task[tuple[Matrix, float]]:
        task = asyncio.create_task(self._embed(text))
        self._pending[text] = task

        def done(t: asyncio.Task[tuple[Matrix, float]]) -> None:
            self._pending.pop(text, None)
            if not t.cancelled():
                t.exception()  # read here, so an unawaited failure is not logged as lost

        task.add_done_callback(done)
        return task

    async def question(self, text: str) -> tuple[Matrix, float]:
        """`_embed_question` off the event loop, once per text: the memories and the
        recent messages of one question are scored against the same vector."""
        hit = self._questions.get(text)
        if hit is not None:
            return hit
        if self._missed_recently(text):
            raise TimeoutError  # the same wake's recent messages: no second wait
        task = self._pending.get(text) or self._start(text)
        # Shielded: a caller given up on (a cancelled reply) leaves the vector to finish.
        return await asyncio.shield(task)

    def _missed_recently(self, text: str) -> bool:
        missed = self._missed.get(text)
        return missed is not None and time.monotonic() - missed < MISSED_FOR_S

    async def _embed(self, text: str) -> tuple[Matrix, float]:
        try:
            hit = await asyncio.wait_for(
                asyncio.to_thread(self._embed_question, text), self._question_timeout_s
            )
        except (TimeoutError, LLMError):
            if len(self._missed) >= QUESTIONS_KEPT:
                self._missed.pop(next(iter(self._missed)))
            self._missed[text] = time.monotonic()
            raise
        if len(self._questions) >= QUESTIONS_KEPT:
            self._questions.pop(next(iter(self._questions)))
        self._questions[text] = hit
        return hit

    async def scores(
        self, scope: str, text: str, candidate_ids: AbstractSet[int]
    ) -> DenseScores | None:
        try:
            index = await self.index()
            if index is None:
                return self._words_only(f"no vectors of {self.embedder_id} yet (being built)")
            search = self.place.searched(index.model_id, scope)
            if search is not None:
                query, background = await self.question(text)
                ids, sims = await search.nearest(query, frozenset(candidate_ids))
                if not len(ids):
                    return None
                return DenseScores(ids, sims, background, complete=False)
            positions = index.select(scope, candidate_ids)
            if not len(positions):
                return None
            query, background = await self.question(text)
            return DenseScores(index.ids_at(positions), index.scores(positions, query), background)
        except TimeoutError:
            return self._words_only(
                f"the question's embedding took over {self._question_timeout_s:g}s"
            )
        except LLMError as exc:
            return self._words_only(f"the embeddings API failed ({type(exc).__name__})")
        except Exception:
            self._failure()
            return None

    def _words_only(self, why: str) -> DenseScores | None:
        """No dense scores for this question, saying why (an API model only: the local
        model's missing index stays silent, as it always was)."""
        if self._settings.embed_api is None:
            return None
        empty = np.zeros(0, dtype=np.int64)
        return DenseScores(empty, np.zeros(0, dtype=np.float32), note=f"dense: {why}: words only")

    async def cosines(self, scope: str, text: str, ids: Sequence[int]) -> dict[int, float]:
        try:
            index = await self.index()
            if index is None or not ids:
                return {}
            query, _ = await self.question(text)
            search = self.place.searched(index.model_id, scope)
            if search is not None:
                return await search.cosines(query, ids)
            positions = index.select(scope, ids)
            return dict(
                zip(
                    index.ids_at(positions).tolist(),
                    index.scores(positions, query).tolist(),
                    strict=True,
                )
            )
        except (TimeoutError, LLMError):
            return {}
        except Exception:
            self._failure()
            return {}

    def close(self) -> None:
        """Release the embedder's connections (an API's), at shutdown."""
        close = getattr(self._embedder, "close", None)
        if callable(close):
            close()

    def _failure(self) -> None:
        if not self._failed:  # once: a broken model would otherwise log every question
            log.exception("dense retrieval failed; recall goes on without it")
            self._failed = True
