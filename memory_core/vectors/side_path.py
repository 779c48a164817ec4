"""`core.vectors`: the vector side path recall consults when its lexical stages are silent.

It implements `memory_core.recall.vector_port.VectorSidePath`. The bot process only
embeds questions: memory vectors come from the index file `yuji embed` writes in a
separate process, re-read whenever that file changes. The model is loaded on the
first question, once, off the event loop. Nothing here raises into recall: a missing
index, an unloadable model or a stale row all end in silence (None).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncGenerator, Callable, Mapping
from collections.abc import Set as AbstractSet
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace

import numpy as np
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.recall.answer_type import asked, can_answer
from memory_core.recall.vector_port import VectorAsk, VectorGuess
from memory_core.settings import Settings, VectorMode
from memory_core.storage import vectors_repo
from memory_core.storage.engine import Database

from .embedder import Calibration, Embedder
from .factory import calibration_for, embedder_from_settings
from .gate import (
    GateDecision,
    Pool,
    Scored,
    decide,
    one_per_restatement,
    rank,
    restatement_groups,
)
from .store import MANIFEST, Positions, VectorIndex, model_folder
from .text import (
    QuestionShape,
    ScopeNames,
    content_terms,
    involves_all,
    particular_things,
    question_shape,
    question_text,
    said_tokens,
    scope_names,
    unheard,
)

log = logging.getLogger(__name__)

TERM_CHECKED = 2
"""Candidates the gate needs (best and runner-up); they get the word-sharing check."""
RESTATED_WINDOW = 32
"""Leaders compared for restatements: a fact written down again and again would
otherwise be its own runner-up and fail the margin."""


@dataclass(frozen=True, slots=True)
class Candidates:
    """The scored candidates of one question, before the gate."""

    scored: tuple[Scored, ...]
    subject_filtered: bool
    pool: Pool = field(default_factory=Pool)
    """The spread of every candidate's score, not only the kept ones."""


NONE = Candidates((), False)


class VectorSide:
    def __init__(
        self,
        settings: Settings,
        db: Database,
        *,
        embedder: Embedder | None = None,
        embedder_factory: Callable[[Settings], Embedder] = embedder_from_settings,
    ) -> None:
        self._settings = settings
        self._db = db
        self._mode: VectorMode = settings.vector_mode
        self._embedder = embedder
        self._factory = embedder_factory
        self._index: VectorIndex | None = None
        self._index_stamp: int | None = None
        self.last_decision: GateDecision | None = None
        """The most recent gate decision (for logs, `/recall` and tests)."""

    # --- configuration -------------------------------------------------------------

    @property
    def mode(self) -> VectorMode:
        return self._mode

    def set_mode(self, mode: VectorMode) -> None:
        """Switching mode changes configuration only: the index stays as it is."""
        self._mode = mode

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._factory(self._settings)
        return self._embedder

    @property
    def calibration(self) -> Calibration:
        return calibration_for(self._settings, self.embedder)

    # --- the index file --------------------------------------------------------------

    def index(self) -> VectorIndex | None:
        """The current index of this model, re-read when `yuji embed` replaced it."""
        folder = model_folder(self._settings.vectors_dir, self.embedder.model_id)
        try:
            stamp = os.stat(folder / MANIFEST).st_mtime_ns
        except OSError:
            self._index, self._index_stamp = None, None
            return None
        if stamp != self._index_stamp:
            self._index = VectorIndex.load(folder, self.embedder.model_id)
            self._index_stamp = stamp if self._index is not None else None
        return self._index

    # --- the side path -------------------------------------------------------------------

    async def guess(self, ask: VectorAsk) -> VectorGuess | None:
        try:
            shape, found = await self.explain(ask)
            decision = decide(shape, found.scored, self.calibration, found.pool)
        except Exception:
            log.exception("vector side path failed; staying silent")
            return None
        self.last_decision = decision
        log.debug("vector gate %s: %s (%s)", ask.scope, decision.reason, decision.best)
        return decision.guess

    async def explain(self, ask: VectorAsk) -> tuple[QuestionShape, Candidates]:
        """The gate's inputs for one question (the sweep replays the gate on them)."""
        async with self._reading(ask.conn) as conn:
            return await self._explain(conn, ask)

    async def candidates(
        self,
        scope: str,
        text: str,
        candidate_ids: AbstractSet[int],
        *,
        subjects: frozenset[str] = frozenset(),
        keep: int = TERM_CHECKED,
    ) -> Candidates:
        """The best `keep` indexed candidates of this scope (only memories about
        `subjects`, when given), before the gate."""
        async with self._db.read() as conn:
            names = await self._names(conn, scope, None)
            return await self._candidates(
                conn, scope, text, candidate_ids, names, subjects=subjects, keep=keep
            )

    async def top(
        self, scope: str, text: str, candidate_ids: AbstractSet[int], k: int
    ) -> list[Scored]:
        """Plain vector top-k with no gate (the baseline of `yuji eval --baselines`)."""
        found = await self.candidates(scope, text, candidate_ids, keep=k)
        return rank(found.scored)[:k]

    async def _explain(
        self, conn: AsyncConnection, ask: VectorAsk
    ) -> tuple[QuestionShape, Candidates]:
        scope, text = ask.scope, ask.text
        names = await self._names(conn, scope, ask.aliases)
        shape = question_shape(text, names, private=scope.startswith("private:"))
        if not (shape.has_intent and shape.has_subject):
            return shape, NONE
        shape = await self._with_unheard(conn, scope, text, shape, names)
        if shape.unheard:  # the gate refuses whatever the candidates: don't score them
            return shape, NONE
        found = await self._candidates(
            conn, scope, text, ask.candidate_ids, names, subjects=shape.subjects, once=True
        )
        return shape, found

    async def _candidates(
        self,
        conn: AsyncConnection,
        scope: str,
        text: str,
        candidate_ids: AbstractSet[int],
        names: ScopeNames,
        *,
        subjects: frozenset[str] = frozenset(),
        keep: int = TERM_CHECKED,
        once: bool = False,
    ) -> Candidates:
        """Score the question against the indexed candidates of this scope only (when
        it names people, only memories about them compete); the best `keep`. With
        `once`, memories restating one another among the leaders count once."""
        index = self.index()
        if index is None:
            return Candidates((), False)
        positions = index.select(scope, candidate_ids)
        filtered = bool(subjects)
        if subjects:
            positions = index.about(positions, subjects)
        if len(subjects) > 1 and len(positions):
            positions = await self._involving_all(conn, index, positions, subjects, names)
        if not len(positions):
            return Candidates((), filtered)
        nicknames = self._settings.nicknames
        query = await asyncio.to_thread(
            self.embedder.embed, [question_text(text, names, nicknames)]
        )
        scores = index.scores(positions, query[0])
        ids = index.ids_at(positions)
        # Best first, ties to the lower id (the order `gate.rank` defines); only the
        # first few are turned into objects.
        window = RESTATED_WINDOW if once else TERM_CHECKED
        order = np.lexsort((ids, -scores))[: max(keep, window + 1)]
        ranked = [Scored(int(ids[i]), float(scores[i]), shares_terms=False) for i in order]
        current = await vectors_repo.current_texts(
            conn, [s.memory_id for s in ranked[: window + 1]]
        )
        pool = scores
        if once:
            texts = {i: content for i, (content, _) in current.items()}
            groups = restatement_groups(ranked[:window], texts)
            ranked = [*one_per_restatement(groups), *ranked[window:]]
            # A fact restated is one candidate in the pool too, not a crowd of rivals.
            again = [s.memory_id for g in groups for s in g[1:]]
            pool = scores[~np.isin(ids, again)] if again else scores
        # Only the leaders can pass the gate: check word sharing for them alone.
        question_terms = content_terms(text, names, nicknames)
        # With the unit the question names, as recall reads it: "几只" is not answered
        # by a memory whose only number is "六个月".
        wanted = asked(text)
        checked: list[Scored] = []
        for s in ranked[:TERM_CHECKED]:
            content, version = current.get(s.memory_id, ("", -1))
            checked.append(
                replace(
                    s,
                    shares_terms=bool(question_terms & content_terms(content, names)),
                    answers=can_answer(wanted, content),
                    stale=version != index.version_of(s.memory_id),
                )
            )
        scored = (*checked, *ranked[TERM_CHECKED:keep])
        return Candidates(scored, filtered, Pool.of(pool))

    # --- reads ---------------------------------------------------------------------

    @asynccontextmanager
    async def _reading(self, conn: AsyncConnection | None) -> AsyncGenerator[AsyncConnection, None]:
        """The read recall is already in (one snapshot, no second transaction), or one
        of our own."""
        if conn is not None:
            yield conn
            return
        async with self._db.read() as own:
            yield own

    async def _names(
        self, conn: AsyncConnection, scope: str, aliases: Mapping[str, str] | None
    ) -> ScopeNames:
        index = self.index()
        subjects = index.subjects(scope) if index is not None else frozenset[str]()
        if aliases is None:
            aliases = await vectors_repo.scope_aliases(conn, scope)
        return scope_names(subjects, aliases)

    async def _with_unheard(
        self,
        conn: AsyncConnection,
        scope: str,
        text: str,
        shape: QuestionShape,
        names: ScopeNames,
    ) -> QuestionShape:
        """The shape with the particular things it asks about that this chat never named."""
        things = particular_things(text, names)
        if not things:
            return shape
        heard = await vectors_repo.heard_tokens(conn, scope, said_tokens(things))
        return replace(shape, unheard=unheard(things, heard))

    async def _involving_all(
        self,
        conn: AsyncConnection,
        index: VectorIndex,
        positions: Positions,
        subjects: frozenset[str],
        names: ScopeNames,
    ) -> Positions:
        """A question naming several people asks about them together: when some
        memories involve all of them, only those compete."""
        rows = [index.rows[int(p)] for p in positions]
        current = await vectors_repo.current_texts(conn, [r.memory_id for r in rows])
        together = [
            bool(involves_all(r.subject, current.get(r.memory_id, ("", 0))[0], subjects, names))
            for r in rows
        ]
        return positions[np.asarray(together, dtype=bool)] if any(together) else positions
