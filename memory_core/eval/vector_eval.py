"""The dense parts of `yuji eval`: the index for the run, and the pure-vector and
RRF-hybrid baselines over the same model (docs/design.md#dense-retrieval)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from memory_core.recall.visibility import is_retrospective
from memory_core.service import Yuji
from memory_core.vectors.build import sync_index
from memory_core.vectors.dense import Dense
from memory_core.vectors.fusion import rrf

from .dataset import DataQuery, Dataset
from .loader import Loaded
from .metrics import Answer, report

POOL = 50
"""How deep each ranking goes before fusion."""
RRF_WEIGHTS = (0.7, 0.3)
"""vector, bm25."""


def dense_of(core: Yuji) -> Dense:
    """The core's dense retrieval, or one made for this run when the mode is off."""
    if isinstance(core.vectors, Dense):
        return core.vectors
    return Dense(core.settings.with_changes(vector_mode="shadow"), place=core.vector_place)


async def prepare(core: Yuji) -> Dense:
    """Embed the freshly loaded memories (what `yuji embed` would do)."""
    dense = dense_of(core)
    await sync_index(core.memory_repo, dense.embedder, core.vector_place)
    return dense


async def baselines(core: Yuji, loaded: Loaded, ds: Dataset, limit: int) -> dict[str, Any]:
    """Pure vector top-k and the RRF hybrid (vector 0.7 / bm25 0.3, k=60) on the same
    model, both over the same visible memories recall would search, each searching
    the wake and its context joined."""
    dense = await prepare(core)
    plain: list[Answer] = []
    hybrid: list[Answer] = []
    repo = core.memory_repo
    for q in ds.queries:
        started = time.perf_counter()
        retro = is_retrospective(q.text)
        ids = await repo.visible_ids(q.scope, ds.now, retrospective=retro)
        found = await dense.scores(q.scope, q.joined, ids)
        vector_ranked: list[int] = []
        if found is not None:
            order = np.lexsort((found.ids, -found.scores))[:POOL]
            vector_ranked = [int(found.ids[i]) for i in order]
        ms = (time.perf_counter() - started) * 1000
        plain.append(_answer(loaded, q, vector_ranked[:limit], ms))
        bm25 = await core.recall.baseline_bm25(q.scope, q.joined, limit=POOL)
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
