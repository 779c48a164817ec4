"""`yuji eval --calibrate`: relevance weights for the operator's own recall models.

The training corpus ships with yuji (in a wheel as `memory_core/eval/corpus/`, copied
there from `training/corpus/` at build time; in a source checkout it is read where it
lies). Every question of it is asked through the real recall path up to its
candidates (`Recall.explain`) with the configured embedding model; with a reranker,
the `rerank_candidates` best of them by P without it are sent to it, exactly as a wake
does (recall/rerank.py). From those rows it fits, for the pair of embedding model and
reranker (training.fit: out-of-fold operating points, one chat held out at a time):

- the weights with the reranker's column, for the embedding model and for words only
  (what a wake uses when its question has no vector);
- the weights without a reranker for an embedding model nothing ships for (an API or
  ONNX model): what a wake falls back to when the reranker fails.

It writes them to `YUJI_CALIBRATION_DIR` (default `data/calibration/`), one file per
pair, which recall reads at start (a configured pair without its file stops the
start). The shipped weights (bundled model, words only) are never rewritten here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_core.clock import FakeClock
from memory_core.errors import ConfigError
from memory_core.providers import reranker_from_settings
from memory_core.recall import relevance
from memory_core.recall.relevance import LEXICAL, NO_RERANKER, RelevanceModel
from memory_core.recall.rerank import Reranker, document, leaders, squashed, with_column
from memory_core.service import Yuji
from memory_core.settings import Settings

from . import loader, vector_eval
from .dataset import Dataset, load_dataset
from .training import Asked, fit, source_name

ROOT = Path(__file__).resolve().parent


def corpus_files() -> list[Path]:
    """The training corpus's files: the wheel's copy, else the source checkout's."""
    for folder in (ROOT / "corpus", ROOT.parents[1] / "training" / "corpus"):
        files = sorted(folder.glob("*.json"))
        if files:
            return files
    raise ConfigError(
        "the training corpus is not installed (memory_core/eval/corpus/): "
        "name dataset files, `yuji eval --calibrate FILE.json ...`"
    )


@dataclass(frozen=True)
class Question:
    """One corpus question as the reranker would see it."""

    asked: Asked
    text: str
    documents: tuple[str, ...]
    """What the reranker reads of each candidate (rerank.document)."""


@dataclass(frozen=True)
class Calibration:
    embedder: str
    reranker: str
    models: tuple[RelevanceModel, ...]
    """Every model fitted, in the order written."""
    baseline: RelevanceModel
    """The dense model without the reranker, fitted on the same rows (to compare)."""
    files: tuple[Path, ...] = ()


async def collect(ds: Dataset, settings: Settings) -> tuple[str, list[Question]]:
    """(embedder id, each question's rows and candidate texts) for one dataset."""
    with tempfile.TemporaryDirectory(prefix="yuji-calibrate-") as tmp:
        clock = FakeClock(ds.now)
        run = settings.with_changes(
            data_dir=Path(tmp),
            vector_mode="on",
            timezone=ds.timezone,
            rerank_base_url="",
            rerank_model="",
            rerank_model_path="",
        )
        core = await Yuji.open(run, clock=clock)
        try:
            loaded = await loader.load(core, clock, ds)
            clock.set(ds.now)
            dense = await vector_eval.prepare(core)
            out: list[Question] = []
            for q in (q for q in ds.queries if not q.about_messages):
                ex = await core.recall.explain(q.scope, q.text, now=ds.now)
                names = [loaded.names.get(mem.id) for mem in ex.memories]
                asked = Asked(
                    group=f"{ds.name}/{q.scope}",
                    tier=q.tier,
                    rows=ex.rows,
                    labels=np.array([n in q.expect_any for n in names], dtype=np.float64),
                    stale=np.array([n in q.expect_none for n in names], dtype=bool),
                    latin=ex.question.latin,
                    wake=ex.wake.signals,
                )
                docs = tuple(document(mem) for mem in ex.memories)
                out.append(Question(asked, ex.question.embed_text, docs))
            return dense.embedder_id, out
        finally:
            await core.close()


async def reranked(
    questions: Sequence[Question], base: RelevanceModel, reranker: Reranker, candidates: int
) -> list[Asked]:
    """Each question's rows with the reranker's column, its leaders chosen by `base`
    (the chatter gate's silenced wakes are not sent, as on a wake)."""
    out: list[Asked] = []
    for q in questions:
        rows = q.asked.rows
        at: list[int] = []
        silent = base.chatter is not None and base.chatter.is_chatter(q.asked.wake)
        if len(rows) and not silent:
            at = leaders(base.p(rows), candidates)
        found = await reranker.scores(q.text, [q.documents[i] for i in at]) if at else []
        out.append(dataclasses.replace(q.asked, rows=_extended(rows, at, found)))
    return out


def _extended(
    rows: npt.NDArray[np.float64], at: list[int], found: list[float]
) -> npt.NDArray[np.float64]:
    return with_column(rows.reshape(len(rows), -1), at, squashed(found))


def _base(embedder: str, settings: Settings, fitted: RelevanceModel | None) -> RelevanceModel:
    """The weights a wake uses without the reranker: the shipped ones, else these."""
    if fitted is not None:
        return fitted
    path = Path(settings.relevance_weights) if settings.relevance_weights else None
    return relevance.load(embedder, path if embedder != LEXICAL else None)


def ships(embedder: str) -> bool:
    try:
        relevance.load(embedder)
    except ConfigError:
        return False
    return True


async def calibrate(settings: Settings, files: Sequence[Path]) -> Calibration:
    """Fit (and write) the weights for the configured models on `files`."""
    reranker = reranker_from_settings(settings)
    questions: list[Question] = []
    embedder = ""
    for path in files:
        embedder, found = await collect(load_dataset(path), settings)
        questions.extend(found)
    sources = [source_name(p) for p in files]
    plain = [q.asked for q in questions]
    own = None if ships(embedder) or settings.relevance_weights else fit(plain, embedder, sources)
    baseline = own or fit(plain, embedder, sources)
    models: list[RelevanceModel] = [own] if own is not None else []
    rerank_id = NO_RERANKER
    if reranker is not None:
        rerank_id = reranker.reranker_id
        try:
            for name in (embedder, LEXICAL):
                base = _base(name, settings, own if name == embedder else None)
                rows = await reranked(questions, base, reranker, settings.rerank_candidates)
                models.append(fit(rows, name, sources, reranker=rerank_id))
        finally:
            await reranker.aclose()
    folder = settings.calibration_path
    written: list[Path] = []
    for model in models:
        path = folder / model.file_name
        await asyncio.to_thread(_write, path, model.to_json())
        written.append(path)
    return Calibration(embedder, rerank_id, tuple(models), baseline, tuple(written))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def report(result: Calibration) -> str:
    """What was fitted and the dev-style figures on the corpus's held-out chats, with
    and without the reranker side by side."""
    lines = [f"embedding model {result.embedder}; reranker {result.reranker}"]
    for model in result.models:
        held = model.meta["held_out_chats"]
        lines.append(
            f"fitted {model.file_name}: floor {model.floor:.3f}, sure {model.sure:.3f}; "
            f"held out: answers below the floor {held['answers_below_floor']:.3f}, "
            f"near misses with a sure memory {held['near_misses_sure']:.3f}"
        )
        if model.reranker != NO_RERANKER:
            weight = _weight(model, relevance.RERANK)
            lines.append(
                f"  the reranker's weight {weight:+.2f} (strongest other {_other(model):+.2f})"
            )
    with_reranker = next(
        (m for m in result.models if m.embedder == result.embedder and m.reranker != NO_RERANKER),
        None,
    )
    lines.append("held-out chats of the corpus (hit@5 any band / sure):")
    header = f"  {'language':<9}{'tier':<14}{'n':>5}  {'without':>13}"
    header += f"  {'with reranker':>13}" if with_reranker else ""
    lines.append(header)
    base = result.baseline.meta["held_out_chats"]
    other: dict[str, Any] = with_reranker.meta["held_out_chats"] if with_reranker else {}
    for language in ("chinese", "english"):
        for tier, row in base.get(language, {}).items():
            cells = f"  {row['rate']:.3f}/{row['sure_rate']:.3f}".rjust(15)
            if with_reranker:
                r = other[language][tier]
                cells += f"  {r['rate']:.3f}/{r['sure_rate']:.3f}".rjust(15)
            lines.append(f"  {language:<9}{tier:<14}{row['n']:>5}{cells}")
    lines.append(
        "positive tiers: the answer injected (any band / as sure); negative, leakage and "
        "chatter: anything injected (any band / as sure)"
    )
    if result.files:
        lines.append("wrote " + ", ".join(str(p) for p in result.files))
    return "\n".join(lines)


def _weight(model: RelevanceModel, name: str) -> float:
    return float(model.weights[model.features.index(name)])


def _other(model: RelevanceModel) -> float:
    return max(
        (
            float(w)
            for n, w in zip(model.features, model.weights, strict=True)
            if n != relevance.RERANK
        ),
        key=abs,
        default=0.0,
    )
