"""Fit the relevance model (recall/relevance.py) on datasets of the eval format.

Every query of every training file is asked through the real recall path up to its
decision (`Recall.explain`): the candidates it would weigh and their features. A
candidate is a positive example when the query expects it. The operating points come
from out-of-fold predictions (each chat predicted by a model fitted without it), so
the threshold is chosen on chats the weights never saw:

- `threshold`: the lowest P at which at most `FALSE_ANSWER_RATE` of the questions
  nothing answers get an answer;
- `companion`: the P (at or below the threshold) that lets other memories come along,
  chosen for the most hits without injecting a replaced version (stale);
- `sure`: the P above which at least `SURE_PRECISION` of what is injected is right;
  below it a memory is labelled as a guess.

The result is deterministic: the same files and embedder give the same weights.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_core.clock import FakeClock
from memory_core.recall import relevance
from memory_core.recall.features import DENSE_FEATURES, FEATURES
from memory_core.recall.relevance import LEXICAL, RelevanceModel
from memory_core.service import Yuji
from memory_core.settings import Settings

from . import loader, vector_eval
from .dataset import NEGATIVE_TIERS, Dataset

FALSE_ANSWER_RATE = 0.40
"""The share of unanswerable questions the threshold may answer (on held-out chats):
the rate issue 13 states as acceptable for near misses."""
SURE_PRECISION = 0.8
L2 = 1.0


@dataclass(frozen=True)
class Asked:
    """One training question: its candidates' features and labels."""

    group: str
    """The chat it was asked in (file name + scope): the unit of cross-validation."""
    tier: str
    rows: npt.NDArray[np.float64]
    labels: npt.NDArray[np.float64]
    """1 = expected, 0 = not."""
    stale: npt.NDArray[np.bool_]
    """Candidates the query names as must-not (a replaced version)."""
    latin: float = 0.0
    """The share of the question's letters that are latin (0 for Chinese)."""

    @property
    def negative(self) -> bool:
        return self.tier in NEGATIVE_TIERS


async def collect(ds: Dataset, settings: Settings | None = None) -> tuple[str, list[Asked]]:
    """(embedder id, one Asked per query) for one dataset, in a temporary database."""
    with tempfile.TemporaryDirectory(prefix="yuji-train-") as tmp:
        clock = FakeClock(ds.now)
        base = settings or Settings()
        run = base.with_changes(data_dir=Path(tmp), vector_mode="on")
        core = await Yuji.open(run, clock=clock)
        try:
            loaded = await loader.load(core, clock, ds)
            clock.set(ds.now)
            dense = await vector_eval.prepare(core)
            out: list[Asked] = []
            for q in ds.queries:
                ex = await core.recall.explain(q.scope, q.text, now=ds.now)
                names = [loaded.names.get(mem.id) for mem in ex.memories]
                out.append(
                    Asked(
                        group=f"{ds.name}/{q.scope}",
                        tier=q.tier,
                        rows=ex.rows,
                        labels=np.array([n in q.expect_any for n in names], dtype=np.float64),
                        stale=np.array([n in q.expect_none for n in names], dtype=bool),
                        latin=ex.question.latin,
                    )
                )
            return dense.embedder_id, out
        finally:
            await core.close()


def features_for(embedder: str) -> tuple[str, ...]:
    if embedder == LEXICAL:
        return tuple(f for f in FEATURES if f not in DENSE_FEATURES)
    return FEATURES


def fit(asked: Sequence[Asked], embedder: str, sources: Sequence[str] = ()) -> RelevanceModel:
    """The model on all of `asked`, its operating points from out-of-fold predictions."""
    names = features_for(embedder)
    cols = [FEATURES.index(n) for n in names]
    fold = _folds(asked)
    oof: list[npt.NDArray[np.float64]] = [np.zeros(0)] * len(asked)
    for held in sorted(set(fold)):
        train = [a for a, f in zip(asked, fold, strict=True) if f != held]
        model = _fit(train, names, cols, embedder)
        for i, a in enumerate(asked):
            if fold[i] == held:
                oof[i] = model.p(a.rows) if len(a.rows) else np.zeros(0)
    threshold, companion, sure, report = operating_points(asked, oof)
    final = _fit(asked, names, cols, embedder)
    meta = {
        "trained_on": list(sources),
        "questions": len(asked),
        "false_answer_rate": FALSE_ANSWER_RATE,
        "held_out_chats": report,
    }
    return RelevanceModel(
        embedder=embedder,
        features=names,
        mean=final.mean,
        scale=final.scale,
        weights=final.weights,
        bias=final.bias,
        threshold=threshold,
        companion=companion,
        sure=sure,
        meta=meta,
    )


def _folds(asked: Sequence[Asked]) -> list[str]:
    """One fold per chat; a dataset of fewer than three chats is split into five folds
    of questions instead."""
    chats = sorted({a.group for a in asked})
    if len(chats) >= 3:
        return [a.group for a in asked]
    return [f"fold-{i % 5}" for i in range(len(asked))]


def _fit(
    asked: Sequence[Asked], names: tuple[str, ...], cols: list[int], embedder: str
) -> RelevanceModel:
    with_rows = [a for a in asked if len(a.rows)]
    x = np.vstack([a.rows for a in with_rows])[:, cols]
    y = np.concatenate([a.labels for a in with_rows])
    mean, scale, weights, bias = relevance.fit(x, y, names, l2=L2)
    return RelevanceModel(embedder, names, mean, scale, weights, bias, 0.5, 0.5, 0.5)


def operating_points(
    asked: Sequence[Asked], p: Sequence[npt.NDArray[np.float64]]
) -> tuple[float, float, float, dict[str, float]]:
    best = np.array([float(pi.max()) if len(pi) else 0.0 for pi in p])
    negative = np.array([a.negative for a in asked])
    grid = np.unique(np.round(best, 4))
    threshold = 1.0
    for t in grid:  # ascending: the lowest threshold within the false-answer rate
        answered = best[negative] >= t
        if answered.mean() <= FALSE_ANSWER_RATE if len(answered) else True:
            threshold = float(t)
            break
    companion = threshold
    best_score = -1.0
    for c in np.linspace(threshold * 0.2, threshold, 17):
        hits, stale = _hits(asked, p, threshold, float(c))
        score = hits - 2 * stale
        if score > best_score + 1e-9:
            best_score, companion = score, float(c)
    right = np.concatenate([a.labels for a in asked if len(a.rows)])
    every = np.concatenate([pi for pi in p if len(pi)])
    sure = threshold
    for s in np.linspace(threshold, 1.0, 41):
        kept = every >= s
        if kept.sum() and right[kept].mean() >= SURE_PRECISION:
            sure = float(s)
            break
    hits, stale = _hits(asked, p, threshold, companion)
    report: dict[str, Any] = {
        "hit_rate": round(hits / max(1, sum(not a.negative for a in asked)), 4),
        "negatives_answered": round(float((best[negative] >= threshold).mean()), 4)
        if negative.any()
        else 0.0,
        "stale": stale,
    }
    for language, english in (("chinese", False), ("english", True)):
        chosen = [i for i, a in enumerate(asked) if (a.latin >= 0.5) == english]
        if chosen:
            report[language] = tier_rates(
                [asked[i] for i in chosen], [p[i] for i in chosen], threshold, companion
            )
    return round(threshold, 6), round(companion, 6), round(sure, 6), report


def tier_rates(
    asked: Sequence[Asked], p: Sequence[npt.NDArray[np.float64]], threshold: float, companion: float
) -> dict[str, float]:
    """Per tier: the share of questions hit (positive tiers) or answered at all
    (unanswerable ones) at these operating points."""
    by: dict[str, list[int]] = {}
    for a, pi in zip(asked, p, strict=True):
        hits, _ = _hits([a], [pi], threshold, companion)
        answered = bool(len(pi)) and float(pi.max()) >= threshold
        count = by.setdefault(a.tier, [0, 0])
        count[0] += int(answered if a.negative else hits)
        count[1] += 1
    return {tier: round(n / total, 4) for tier, (n, total) in sorted(by.items())}


def _hits(
    asked: Sequence[Asked], p: Sequence[npt.NDArray[np.float64]], threshold: float, companion: float
) -> tuple[int, int]:
    hits = stale = 0
    for a, pi in zip(asked, p, strict=True):
        if not len(pi) or pi.max() < threshold:
            continue
        order = np.argsort(-pi, kind="stable")
        chosen = [i for i in order if pi[i] >= companion][:5]
        if not a.negative and any(a.labels[i] for i in chosen):
            hits += 1
        stale += int(any(a.stale[i] for i in chosen))
    return hits, stale


def source_name(path: Path) -> str:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    return f"{path.name}@{digest}"


async def train_files(
    files: Sequence[Path], settings: Settings | None = None
) -> list[RelevanceModel]:
    """The dense model for the configured embedder and the lexical one, fitted on
    `files` (each loaded into its own temporary database)."""
    from .dataset import load_dataset

    asked: list[Asked] = []
    embedder = ""
    for path in files:
        embedder, found = await collect(load_dataset(path), settings)
        asked.extend(found)
    sources = [source_name(p) for p in files]
    return [fit(asked, embedder, sources), fit(asked, LEXICAL, sources)]
