"""The vector parts of `yuji eval`: the index for the run, the threshold/margin sweep,
and the pure-vector and RRF-hybrid baselines (SPEC.md §14, issue "vector side path").

The sweep asks every query once through the real recall path with the side path in
shadow mode, records the candidates recall handed to it, and replays the pure gate
on them for every (threshold, margin) of the grid: the same decision recall would
have made in candidate mode, without re-running recall per grid point.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from memory_core.recall.vector_port import VectorAsk, VectorGuess, VectorSidePath
from memory_core.recall.visibility import is_retrospective, visible
from memory_core.service import Yuji
from memory_core.settings import VectorMode
from memory_core.storage import memory_repo
from memory_core.vectors.build import sync_index
from memory_core.vectors.embedder import Calibration
from memory_core.vectors.fusion import rrf
from memory_core.vectors.gate import decide
from memory_core.vectors.side_path import Candidates, VectorSide
from memory_core.vectors.text import QuestionShape

from .dataset import DataQuery, Dataset
from .loader import Loaded
from .metrics import Answer, report

THRESHOLDS = (0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.50, 0.60, 0.68)
MARGINS = (0.0, 0.01, 0.02, 0.04, 0.06)
POOL = 50
"""How deep each ranking goes before fusion."""
RRF_WEIGHTS = (0.7, 0.3)
"""vector, bm25."""


def side_path(core: Yuji) -> VectorSide:
    """The core's side path, or one made for this run when the mode is off."""
    if isinstance(core.vectors, VectorSide):
        return core.vectors
    return VectorSide(core.settings.with_changes(vector_mode="shadow"), core.db)


async def prepare(core: Yuji) -> VectorSide:
    """Embed the freshly loaded memories (what `yuji embed` would do)."""
    side = side_path(core)
    await sync_index(core.db, side.embedder, core.settings.vectors_dir)
    return side


class _Recorder:
    """Stands in for the side path during the sweep: recall consults it exactly when
    it would consult the real one; it records the gate's inputs and guesses nothing."""

    def __init__(self, side: VectorSide) -> None:
        self.side = side
        self.consulted: tuple[QuestionShape, Candidates] | None = None

    @property
    def mode(self) -> VectorMode:
        return "shadow"

    async def guess(self, ask: VectorAsk) -> VectorGuess | None:
        self.consulted = await self.side.explain(ask)
        return None


async def sweep(
    core: Yuji,
    loaded: Loaded,
    ds: Dataset,
    *,
    thresholds: Sequence[float] = THRESHOLDS,
    margins: Sequence[float] = MARGINS,
) -> list[dict[str, Any]]:
    """One metrics report (metrics.report) per grid point, plus its threshold/margin."""
    side = await prepare(core)
    recorder = _Recorder(side)
    original: VectorSidePath | None = core.recall.vector
    core.recall.vector = recorder
    asked: list[tuple[DataQuery, tuple[str | None, ...], tuple[str, ...], float, Any]] = []
    try:
        for q in ds.queries:
            recorder.consulted = None
            started = time.perf_counter()
            result = await core.recall.recall(q.scope, q.text, now=ds.now)
            ms = (time.perf_counter() - started) * 1000
            ids = tuple(loaded.names.get(r.memory.id) for r in result.items)
            scopes = tuple(r.memory.scope for r in result.items)
            asked.append((q, ids, scopes, ms, recorder.consulted))
    finally:
        core.recall.vector = original
    table: list[dict[str, Any]] = []
    limit = core.settings.recall_limit
    for threshold in thresholds:
        for margin in margins:
            calibration = Calibration(threshold, margin)
            answers: list[Answer] = []
            for q, ids, scopes, ms, consulted in asked:
                if consulted is not None and len(ids) < limit:
                    shape, found = consulted
                    guess = decide(shape, found.scored, calibration, found.pool).guess
                    if guess is not None:
                        ids = (*ids, loaded.names.get(guess.memory_id))
                        scopes = (*scopes, q.scope)
                answers.append(Answer(query=q, ids=ids, scopes=scopes, ms=ms))
            table.append({"threshold": threshold, "margin": margin, **report(answers)})
    return table


async def baselines(core: Yuji, loaded: Loaded, ds: Dataset, limit: int) -> dict[str, Any]:
    """Pure vector top-k and the RRF hybrid (vector 0.7 / bm25 0.3, k=60) on the same
    model, both over the same visible memories recall would search."""
    side = await prepare(core)
    plain: list[Answer] = []
    hybrid: list[Answer] = []
    for q in ds.queries:
        started = time.perf_counter()
        async with core.db.read() as conn:
            retro = is_retrospective(q.text)
            ids = await memory_repo.ids_where(conn, visible(q.scope, ds.now, retrospective=retro))
        vector_ranked = [s.memory_id for s in await side.top(q.scope, q.text, ids, POOL)]
        ms = (time.perf_counter() - started) * 1000
        plain.append(_answer(loaded, q, vector_ranked[:limit], ms))
        bm25 = await core.recall.baseline_bm25(q.scope, q.text, limit=POOL, now=ds.now)
        fused = rrf([(vector_ranked, RRF_WEIGHTS[0]), ([m.id for m in bm25], RRF_WEIGHTS[1])])
        hybrid.append(_answer(loaded, q, fused[:limit], ms))
    return {"vector": report(plain), "rrf_hybrid": report(hybrid)}


def _answer(loaded: Loaded, q: DataQuery, ids: Sequence[int], ms: float) -> Answer:
    return Answer(
        query=q,
        ids=tuple(loaded.names.get(i) for i in ids),
        scopes=tuple(q.scope for _ in ids),
        ms=ms,
    )


def render_sweep(table: Sequence[dict[str, Any]]) -> str:
    """Threshold x margin rows: hit@5 per positive tier beside the share of negative
    questions answered, overall false recall, stale and leakage."""
    if not table:
        return "(no sweep)"
    tiers = table[0]["tiers"]
    names = [t for t in tiers if t not in ("negative", "leakage")]
    head = ["thr", "margin", *names, "negative", "false_recall", "stale", "leak"]
    width = max(9, *(len(h) for h in head))
    lines = [" ".join(f"{h:>{width}}" for h in head)]
    for row in table:
        cells = [f"{row['threshold']:.2f}", f"{row['margin']:.2f}"]
        cells += [f"{row['tiers'][t]['rate']:.2f}" for t in names]
        cells.append(f"{row['tiers'].get('negative', {}).get('rate', 0.0):.2f}")
        cells += [f"{row['false_recall']:.2f}", str(row["stale"]), str(row["leakage"])]
        lines.append(" ".join(f"{c:>{width}}" for c in cells))
    return "\n".join(lines)
