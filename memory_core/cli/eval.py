"""`yuji eval DATASET [--json] [--distractors N] [--clones N] [--baselines]
[--vector on|shadow|off] [--database URL]` and `yuji eval --calibrate [DATASET ...]
[--out FILE]`.

Loads a recall dataset (docs/eval-format.md) into a fresh temporary database through the
public write path and asks every query through the public recall path, with the
configured recall models (embedding model, reranker) and their calibration; prints
hit@5 per tier, false recall, leakage, stale and latency. `--calibrate` fits the
weights for the configured models on the training corpus shipped with yuji (or the
datasets named) and prints what it fitted (eval/calibrate.py). Never touches the real database:
the run's database is a temporary SQLite file, or with `--database URL` a fresh
database made on that PostgreSQL server and dropped afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from memory_core.errors import UsageError
from memory_core.eval import EvalOptions, load_dataset, run_eval
from memory_core.eval.calibrate import calibrate as fit_models
from memory_core.eval.calibrate import corpus_files, report
from memory_core.eval.dataset import CHATTER, NEGATIVE_TIERS

from .common import load_settings

UNANSWERABLE = NEGATIVE_TIERS | {CHATTER}


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "eval", help="measure recall on a dataset (docs/eval-format.md) in a temporary database"
    )
    parser.add_argument("dataset", type=Path, nargs="*")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--distractors", type=int, default=0, metavar="N", help="add N unrelated memories per chat"
    )
    parser.add_argument(
        "--clones", type=int, default=0, metavar="N", help="add N near-copies of the targets"
    )
    parser.add_argument(
        "--baselines", action="store_true", help="also run FTS5 bm25 top-5 on the same index"
    )
    parser.add_argument(
        "--vector",
        choices=("on", "shadow", "off"),
        default="on",
        help="dense retrieval for the run (vectors are embedded after loading)",
    )
    parser.add_argument(
        "--database",
        default="",
        metavar="URL",
        help="run on this PostgreSQL server (postgresql+asyncpg://...), in a fresh database "
        "created for the run and dropped afterwards",
    )
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="fit relevance weights and thresholds for the configured embedding model and "
        "reranker (YUJI_EMBED_*, YUJI_VECTOR_MODEL_PATH, YUJI_RERANK_*) on the shipped training "
        "corpus (or the DATASET files), write them to YUJI_CALIBRATION_DIR and print "
        "the figures on its held-out chats",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="with --calibrate: also write the embedding model's weights to this file",
    )
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    if args.calibrate:
        return await calibrate(args.dataset, args.out)
    if len(args.dataset) != 1:
        raise UsageError("yuji eval measures one DATASET (or fits with --calibrate)")
    dataset = load_dataset(args.dataset[0])
    options = EvalOptions(
        distractors=args.distractors,
        clones=args.clones,
        baselines=args.baselines,
        vector=args.vector,
        database=args.database,
        models=load_settings().recall_models(),
    )
    result = await run_eval(dataset, options)
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if k != "load"}, ensure_ascii=False))
    else:
        print(render(dataset.name, result))
    return 0


async def calibrate(datasets: list[Path], out: Path | None) -> int:
    """Weights for the configured recall models, fitted on the corpus (or `datasets`)."""
    settings = load_settings()
    result = await fit_models(settings, datasets or corpus_files())
    print(report(result))
    if out is not None:
        model = next(m for m in reversed(result.models) if m.embedder == result.embedder)
        await asyncio.to_thread(out.write_text, model.to_json(), encoding="utf-8")
        print(f"also wrote {out} (YUJI_RELEVANCE_WEIGHTS={out} uses it for the embedding model)")
    return 0


def render(name: str, result: dict[str, Any]) -> str:
    """A table: one row per tier, yuji (any band, then sure only) beside each baseline."""
    baselines: dict[str, dict[str, Any]] = result.get("baselines", {})
    head = f"{'tier':<26}{'n':>5}  {'yuji':>7}  {'sure':>7}  {'empty':>7}  {'stale':>5}" + "".join(
        f"  {b:>10}" for b in baselines
    )
    database = result.get("load", {}).get("database")
    lines = [f"dataset: {name}" + (f" on {database}" if database else ""), head]
    for tier, row in result["tiers"].items():
        kind = "answered" if tier in UNANSWERABLE else "hit@5"
        empty = row.get("empty_rate", 0.0)
        cells = f"  {row['rate']:>7.3f}  {row['sure_rate']:>7.3f}  {empty:>7.3f}  {row['stale']:>5}"
        cells += "".join(f"  {b['tiers'][tier]['rate']:>10.3f}" for b in baselines.values())
        lines.append(f"{tier + ' (' + kind + ')':<26}{row['n']:>5}{cells}")
    for key in ("false_recall", "leakage", "stale"):
        cells = f"  {result[key]:>7}  {'':>7}  {'':>7}  {'':>5}" + "".join(
            f"  {b[key]:>10}" for b in baselines.values()
        )
        lines.append(f"{key:<26}{'':>5}{cells}")
    for p in ("p50", "p95"):
        cells = f"  {result['latency_ms'][p]:>7.2f}  {'':>7}  {'':>7}  {'':>5}" + "".join(
            f"  {b['latency_ms'][p]:>10.2f}" for b in baselines.values()
        )
        lines.append(f"{'latency ' + p + ' (ms)':<26}{'':>5}{cells}")
    lines.append(
        "yuji: the expected memory injected in any band (unanswerable tiers: anything "
        "injected); sure: the same, counting only memories injected as sure; empty: the "
        "share of queries given nothing at all; stale: "
        "expect_none memories injected (temporal: a replaced version on a question about now)"
    )
    degraded = result.get("load", {}).get("supersede_degraded", [])
    if degraded:
        lines.append(f"note: {len(degraded)} supersedes of the dataset were refused by the gates")
    return "\n".join(lines)
