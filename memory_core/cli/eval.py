"""`yuji eval DATASET [--json] [--distractors N] [--clones N] [--baselines]
[--vector on|shadow|off] [--database URL] [--calibrate --out FILE]`.

Loads a recall dataset (docs/eval-format.md) into a fresh temporary database through the
public write path and asks every query through the public recall path; prints hit@5
per tier, false recall, leakage, stale and latency. Never touches the real database:
the run's database is a temporary SQLite file, or with `--database URL` a fresh
database made on that PostgreSQL server and dropped afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from memory_core.eval import EvalOptions, load_dataset, run_eval
from memory_core.eval.dataset import CHATTER, NEGATIVE_TIERS
from memory_core.eval.training import train_files

from .common import load_settings

UNANSWERABLE = NEGATIVE_TIERS | {CHATTER}


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "eval", help="measure recall on a dataset (docs/eval-format.md) in a temporary database"
    )
    parser.add_argument("dataset", type=Path)
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
        help="fit relevance weights and threshold on this dataset for the configured "
        "embedding model (YUJI_VECTOR_MODEL_PATH) instead of measuring",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("relevance-weights.json"), help="with --calibrate"
    )
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    if args.calibrate:
        return await calibrate(args.dataset, args.out)
    dataset = load_dataset(args.dataset)
    options = EvalOptions(
        distractors=args.distractors,
        clones=args.clones,
        baselines=args.baselines,
        vector=args.vector,
        database=args.database,
    )
    result = await run_eval(dataset, options)
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if k != "load"}, ensure_ascii=False))
    else:
        print(render(dataset.name, result))
    return 0


async def calibrate(dataset: Path, out: Path) -> int:
    """Weights for the embedding model the settings name, fitted on `dataset`."""
    settings = load_settings()
    dense, _ = await train_files([dataset], settings, check=False)
    await asyncio.to_thread(out.write_text, dense.to_json(), encoding="utf-8")
    held = dense.meta["held_out_chats"]
    print(
        f"wrote {out} for {dense.embedder}: floor {dense.floor:.3f}, sure {dense.sure:.3f}; "
        f"on held-out chats: answers below the floor {held['answers_below_floor']:.3f}, "
        f"near misses with a sure memory {held['near_misses_sure']:.3f}\n"
        f"use it with YUJI_RELEVANCE_WEIGHTS={out}"
    )
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
