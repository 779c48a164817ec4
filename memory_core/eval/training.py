"""Fit the relevance model (recall/relevance.py) and its chatter gate (recall/chatter.py)
on datasets of the eval format.

Every query of every training file is asked through the real recall path up to its
decision (`Recall.explain`): the candidates it would weigh and their features. A
candidate is a positive example when the query expects it. The operating points come
from out-of-fold predictions (each chat predicted by a model fitted without it), so
they are chosen on chats the weights never saw:

- `floor`: the highest P that drops at most `FLOOR_LOSS` of the answers the candidates
  hold (a question loses its answer when every expected candidate is below it);
- `sure`: the lowest P at which at most `SURE_NEAR_MISS` of the near misses (questions
  naming real people and topics that nothing here answers) get any `sure` memory;
- the chatter gate's line: the highest P(asks) that silences at most `GATE_LOSS` of
  the real questions (answerable or not).

The result is deterministic: the same files and embedder give the same weights.

Each fitted model carries a small reproduction check in `meta["reproduce"]`: the
model `fit` gives on one chat of every training file alone (the file's smallest chat,
loaded by itself, every third of its questions). Featurising those takes a fifth of
the time the whole corpus takes, so the suite (tests/core/recall/test_training.py)
featurises and fits them again and compares: a change to the features, the recall
path up to them, the loader or the fitting that was not followed by a refit shows
there, and the corpus itself is pinned by the `trained_on` hashes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_core.clock import FakeClock
from memory_core.recall import relevance
from memory_core.recall.chatter import SIGNALS, ChatterGate
from memory_core.recall.features import DENSE_FEATURES, FEATURES
from memory_core.recall.relevance import COLUMNS, LEXICAL, NO_RERANKER, RERANK, RelevanceModel
from memory_core.service import Yuji
from memory_core.settings import Settings
from memory_core.vectors.embedder import Embedder

from . import loader, runner, vector_eval
from .dataset import CHATTER, NEGATIVE_TIERS, Dataset

TOLERANCE = 1e-5
"""How far a refit's numbers may stand from the kept ones. With the corpus's vectors
kept (vectors/kept.py) the rows are the same on every CPU but for float arithmetic:
numpy's float32 matrix-vector products (OpenBLAS picks its kernel, and so its
summation order, by CPU) and its SIMD exp/log (AVX-512 and AVX2 kernels differ by an
ulp or two) move cosines and features by 1e-7 or less, and the Newton fit by about as
much. One candidate found or lost moves the weights by 1e-4 to 1e-3: that is never
tolerated (the candidates are also counted exactly)."""
FLOOR_LOSS = 0.03
SURE_NEAR_MISS = 0.15
GATE_LOSS = 0.01
L2 = 1.0
LIMIT = 5


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
    wake: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(len(SIGNALS)))
    """The message's chatter signals."""

    @property
    def negative(self) -> bool:
        return self.tier in NEGATIVE_TIERS

    @property
    def chatter(self) -> bool:
        return self.tier == CHATTER

    @property
    def positive(self) -> bool:
        return not self.negative and not self.chatter


async def collect(
    ds: Dataset, settings: Settings | None = None, embedder: Embedder | None = None
) -> tuple[str, list[Asked]]:
    """(embedder id, one Asked per query) for one dataset, in a temporary database.
    `embedder` replaces the configured one (the training's kept vectors: kept.py)."""
    with tempfile.TemporaryDirectory(prefix="yuji-train-") as tmp:
        clock = FakeClock(ds.now)
        base = settings or Settings()
        run = base.with_changes(data_dir=Path(tmp), vector_mode="on", timezone=ds.timezone)
        core = await Yuji.open(run, clock=clock, embedder=embedder)
        try:
            loaded = await loader.load(core, clock, ds)
            clock.set(ds.now)
            dense = await vector_eval.prepare(core)
            out: list[Asked] = []
            # Questions about recent messages test the quote source; the fit reads
            # memories only (the shipped weights stay reproducible).
            for q in (q for q in ds.queries if not q.about_messages):
                ex = await core.recall.explain(
                    q.scope, q.text, now=ds.now, asker=runner.asker_of(q, ds)
                )
                names = [loaded.names.get(mem.id) for mem in ex.memories]
                out.append(
                    Asked(
                        group=f"{ds.name}/{q.scope}",
                        tier=q.tier,
                        rows=ex.rows,
                        labels=np.array([n in q.expect_any for n in names], dtype=np.float64),
                        stale=np.array([n in q.expect_none for n in names], dtype=bool),
                        latin=ex.question.latin,
                        wake=ex.wake.signals,
                    )
                )
            return dense.embedder_id, out
        finally:
            await core.close()


def features_for(embedder: str) -> tuple[str, ...]:
    if embedder == LEXICAL:
        return tuple(f for f in FEATURES if f not in DENSE_FEATURES)
    return FEATURES


def fit(
    asked: Sequence[Asked],
    embedder: str,
    sources: Sequence[str] = (),
    *,
    reranker: str = NO_RERANKER,
) -> RelevanceModel:
    """The model on all of `asked`, its operating points from out-of-fold predictions.
    With a `reranker`, the rows carry its column (recall/rerank.py) and the model reads it."""
    names = features_for(embedder) + ((RERANK,) if reranker != NO_RERANKER else ())
    cols = [COLUMNS.index(n) for n in names]
    fold = _folds(asked)
    oof: list[npt.NDArray[np.float64]] = [np.zeros(0)] * len(asked)
    asks = np.zeros(len(asked))
    for held in sorted(set(fold)):
        train = [a for a, f in zip(asked, fold, strict=True) if f != held]
        model = _fit(train, names, cols, embedder)
        gate = fit_gate(train, line=0.5)
        for i, a in enumerate(asked):
            if fold[i] == held:
                oof[i] = model.p(a.rows) if len(a.rows) else np.zeros(0)
                asks[i] = gate.p_asks(a.wake)
    floor, sure, report = operating_points(asked, oof)
    line, gate_report = gate_line(asked, asks)
    report["chatter_gate"] = gate_report
    for language, english in (("chinese", False), ("english", True)):
        chosen = [i for i, a in enumerate(asked) if (a.latin >= 0.5) == english]
        if chosen:
            report[language] = tier_rates(
                [asked[i] for i in chosen],
                [oof[i] for i in chosen],
                floor,
                sure,
                [bool(asks[i] < line) for i in chosen],
            )
    final = _fit(asked, names, cols, embedder)
    meta = {
        "trained_on": list(sources),
        "questions": len(asked),
        "candidates": sum(len(a.rows) for a in asked),
        "floor_loss": FLOOR_LOSS,
        "sure_near_miss": SURE_NEAR_MISS,
        "gate_loss": GATE_LOSS,
        "held_out_chats": report,
    }
    return RelevanceModel(
        embedder=embedder,
        features=names,
        mean=final.mean,
        scale=final.scale,
        weights=final.weights,
        bias=final.bias,
        floor=floor,
        sure=sure,
        chatter=fit_gate(asked, line=line),
        meta=meta,
        reranker=reranker,
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
    # Chatter wakes are the gate's to silence; P is about questions and memories.
    with_rows = [a for a in asked if len(a.rows) and not a.chatter]
    x = np.vstack([a.rows for a in with_rows])[:, cols]
    y = np.concatenate([a.labels for a in with_rows])
    mean, scale, weights, bias = relevance.fit(x, y, names, l2=L2)
    return RelevanceModel(embedder, names, mean, scale, weights, bias, 0.0, 0.5)


def fit_gate(asked: Sequence[Asked], *, line: float) -> ChatterGate:
    """The chatter gate fitted on every wake of `asked`: a real question (any tier but
    chatter) is 1, a chatter wake 0."""
    x = np.vstack([a.wake for a in asked])
    y = np.array([0.0 if a.chatter else 1.0 for a in asked])
    mean, scale, weights, bias = relevance.fit(x, y, SIGNALS, l2=L2)
    return ChatterGate(mean, scale, weights, bias, line)


def gate_line(
    asked: Sequence[Asked], asks: npt.NDArray[np.float64]
) -> tuple[float, dict[str, float]]:
    """The highest line that silences at most GATE_LOSS of the real questions."""
    real = np.sort(np.array([p for a, p in zip(asked, asks, strict=True) if not a.chatter]))
    if not len(real):
        return 0.0, {}
    k = int(np.floor(GATE_LOSS * len(real)))
    line = float(real[k]) if k < len(real) else 0.0
    chat = np.array([p for a, p in zip(asked, asks, strict=True) if a.chatter])
    return round(line, 6), {
        "questions_silenced": round(float((real < line).mean()), 4),
        "chatter_silenced": round(float((chat < line).mean()), 4) if len(chat) else 0.0,
    }


def _best_expected(a: Asked, p: npt.NDArray[np.float64]) -> float | None:
    hits = p[a.labels > 0]
    return float(hits.max()) if len(hits) else None


def operating_points(
    asked: Sequence[Asked], p: Sequence[npt.NDArray[np.float64]]
) -> tuple[float, float, dict[str, Any]]:
    """(floor, sure, a report) from out-of-fold P."""
    held = sorted(
        b for a, pi in zip(asked, p, strict=True) if a.positive and (b := _best_expected(a, pi))
    )
    near = np.array(
        [
            float(pi.max()) if len(pi) else 0.0
            for a, pi in zip(asked, p, strict=True)
            if a.tier == "negative"
        ]
    )
    sure = 1.0
    if len(near):
        ordered = np.sort(near)
        allowed = int(np.floor(SURE_NEAR_MISS * len(ordered)))
        # The lowest line that at most `allowed` near misses reach.
        sure = float(ordered[len(ordered) - allowed - 1]) + 1e-6
    floor = 0.0
    if held:
        k = int(np.floor(FLOOR_LOSS * len(held)))
        floor = float(held[k]) if k < len(held) else 0.0
    floor = min(floor, sure)
    report: dict[str, Any] = {
        "answers_in_candidates": len(held),
        "answers_below_floor": round(sum(1 for b in held if b < floor) / max(1, len(held)), 4),
        "near_misses_sure": round(float((near >= sure).mean()), 4) if len(near) else 0.0,
    }
    return round(floor, 6), round(min(sure, 1.0), 6), report


def chosen(pi: npt.NDArray[np.float64], floor: float) -> list[int]:
    """The candidates injected at these points (top LIMIT by P above the floor; the
    engine's MMR and lifts are left out of training)."""
    order = np.argsort(-pi, kind="stable")
    return [int(i) for i in order if pi[i] >= floor][:LIMIT]


def tier_rates(
    asked: Sequence[Asked],
    p: Sequence[npt.NDArray[np.float64]],
    floor: float,
    sure: float,
    gated: Sequence[bool],
) -> dict[str, dict[str, float]]:
    """Per tier: `rate` (positive tiers: the answer injected in any band; others:
    anything injected) and `sure_rate` (the answer injected as sure; others: anything
    injected as sure)."""
    by: dict[str, list[int]] = {}
    for a, pi, silent in zip(asked, p, gated, strict=True):
        picked = [] if silent else chosen(pi, floor)
        if a.positive:
            hit = any(a.labels[i] for i in picked)
            sure_hit = any(a.labels[i] and pi[i] >= sure for i in picked)
        else:
            hit = bool(picked)
            sure_hit = any(pi[i] >= sure for i in picked)
        count = by.setdefault(a.tier, [0, 0, 0])
        count[0] += int(hit)
        count[1] += int(sure_hit)
        count[2] += 1
    return {
        tier: {"n": n, "rate": round(h / n, 4), "sure_rate": round(s_ / n, 4)}
        for tier, (h, s_, n) in sorted(by.items())
    }


def source_name(path: Path) -> str:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    return f"{path.name}@{digest}"


async def train_files(
    files: Sequence[Path],
    settings: Settings | None = None,
    *,
    check: bool = True,
    embedder: Embedder | None = None,
) -> list[RelevanceModel]:
    """The dense model for the configured embedder (or `embedder`) and the lexical one,
    fitted on `files` (each loaded into its own temporary database). With `check`, each
    carries its reproduction check (`meta["reproduce"]`, see `check_models`)."""
    from .dataset import load_dataset

    datasets = [load_dataset(p) for p in files]
    models = await _fit_both(datasets, [source_name(p) for p in files], settings, embedder)
    if not check:
        return models
    checks = await check_models(files, settings, embedder)
    return [
        dataclasses.replace(m, meta={**m.meta, "reproduce": reproduction(c)})
        for m, c in zip(models, checks, strict=True)
    ]


CHECK_EVERY = 3
"""The reproduction check asks every third question of its chats (all tiers stay in)."""


def check_sets(datasets: Sequence[Dataset]) -> list[Dataset]:
    """The reproduction check's datasets: each dataset's smallest chat (fewest memories
    and questions; the first such in its file) with every `CHECK_EVERY`-th question."""
    out: list[Dataset] = []
    for ds in datasets:
        size = dict.fromkeys(ds.scopes, 0)
        for item in (*ds.memories, *ds.queries):
            size[item.scope] += 1
        scope = min(ds.scopes, key=lambda s: size[s])
        chat = only_chat(ds, scope)
        out.append(dataclasses.replace(chat, queries=chat.queries[::CHECK_EVERY]))
    return out


def only_chat(ds: Dataset, scope: str) -> Dataset:
    """`ds` with one chat's messages, memories, aliases and questions."""
    return dataclasses.replace(
        ds,
        scopes=(scope,),
        aliases=tuple(a for a in ds.aliases if a[0] == scope),
        messages=tuple(m for m in ds.messages if m.scope == scope),
        memories=tuple(m for m in ds.memories if m.scope == scope),
        queries=tuple(q for q in ds.queries if q.scope == scope),
    )


async def check_models(
    files: Sequence[Path], settings: Settings | None = None, embedder: Embedder | None = None
) -> list[RelevanceModel]:
    """The dense and the lexical model fitted on `check_sets` of `files` alone (each
    chat in its own temporary database): what `meta["reproduce"]` records."""
    from .dataset import load_dataset

    chats = check_sets([load_dataset(p) for p in files])
    sources = [f"{ds.name}/{ds.scopes[0]}" for ds in chats]
    return await _fit_both(chats, sources, settings, embedder)


async def _fit_both(
    datasets: Sequence[Dataset],
    sources: Sequence[str],
    settings: Settings | None,
    embedder: Embedder | None,
) -> list[RelevanceModel]:
    """The dense model for the configured embedder and the lexical one, on every
    question of `datasets` (each loaded into its own temporary database)."""
    asked: list[Asked] = []
    embedder_id = ""
    for ds in datasets:
        embedder_id, found = await collect(ds, settings, embedder)
        asked.extend(found)
    return [fit(asked, embedder_id, sources), fit(asked, LEXICAL, sources)]


def reproduction(model: RelevanceModel) -> dict[str, Any]:
    """A check model as `meta["reproduce"]` keeps it: its chats and its numbers as the
    weights file writes them."""
    data = json.loads(model.to_json())
    return {
        "chats": list(model.meta["trained_on"]),
        "candidates": model.meta["candidates"],
        "model": {k: v for k, v in data.items() if k not in ("format", "meta")},
    }


def reproduced(kept: dict[str, Any]) -> RelevanceModel:
    """The check model back from `meta["reproduce"]`."""
    meta = {"trained_on": kept["chats"], "candidates": kept.get("candidates")}
    data = {**kept["model"], "format": relevance.FORMAT, "meta": meta}
    return RelevanceModel.from_json(json.dumps(data))


def differences(trained: RelevanceModel, shipped: RelevanceModel, tolerance: float) -> list[str]:
    """What differs between two fits: the chats, features and candidates exactly, the
    numbers beyond `tolerance` (see TOLERANCE); empty when they agree."""
    out: list[str] = []
    for name in ("embedder", "features"):
        if getattr(trained, name) != getattr(shipped, name):
            out.append(name)
    for name in ("trained_on", "candidates"):
        if trained.meta.get(name) != shipped.meta.get(name):
            out.append(name)
    pairs: list[tuple[str, Any, Any]] = [
        (name, getattr(trained, name), getattr(shipped, name))
        for name in ("mean", "scale", "weights", "bias", "floor", "sure")
    ]
    if trained.chatter is None or shipped.chatter is None:
        if trained.chatter is not shipped.chatter:
            out.append("chatter")
    else:
        pairs += [
            (f"chatter {name}", getattr(trained.chatter, name), getattr(shipped.chatter, name))
            for name in ("mean", "scale", "weights", "bias", "line")
        ]
    for name, got, kept in pairs:
        got_a, kept_a = np.asarray(got, dtype=np.float64), np.asarray(kept, dtype=np.float64)
        if got_a.shape != kept_a.shape or not np.allclose(got_a, kept_a, atol=tolerance):
            out.append(name)
    return out
