"""`yuji eval DATASET [--json] [--distractors N] [--clones N] [--baselines]
[--vector off|shadow|candidate] [--vector-sweep]`.

Loads a recall dataset (docs/eval-format.md) into a fresh temporary database through the
public write path and asks every query through the public recall path; prints hit@5
per tier, false recall, leakage, stale and latency. Never touches the real database.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from memory_core.eval import EvalOptions, load_dataset, run_eval
from memory_core.eval.vector_eval import render_sweep


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
        choices=("off", "shadow", "candidate"),
        default="off",
        help="vector side path mode for the run (vectors are embedded after loading)",
    )
    parser.add_argument(
        "--vector-sweep",
        action="store_true",
        help="hits per tier and false recall for a grid of vector thresholds and margins",
    )
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    dataset = load_dataset(args.dataset)
    options = EvalOptions(
        distractors=args.distractors,
        clones=args.clones,
        baselines=args.baselines,
        vector=args.vector,
        vector_sweep=args.vector_sweep,
    )
    result = await run_eval(dataset, options)
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if k != "load"}, ensure_ascii=False))
    else:
        print(render(dataset.name, result))
        if "vector_sweep" in result:
            print("\nvector sweep (hit@5 per tier; negative = share answered):")
            print(render_sweep(result["vector_sweep"]))
    return 0


def render(name: str, result: dict[str, Any]) -> str:
    """A table: one row per tier, yuji beside each baseline."""
    baselines: dict[str, dict[str, Any]] = result.get("baselines", {})
    head = f"{'tier':<22}{'n':>5}  {'yuji':>7}" + "".join(f"  {b:>7}" for b in baselines)
    lines = [f"dataset: {name}", head]
    for tier, row in result["tiers"].items():
        kind = "false" if tier in ("negative", "leakage") else "hit@5"
        cells = f"  {row['rate']:>7.3f}" + "".join(
            f"  {b['tiers'][tier]['rate']:>7.3f}" for b in baselines.values()
        )
        lines.append(f"{tier + ' (' + kind + ')':<22}{row['n']:>5}{cells}")
    for key in ("false_recall", "leakage", "stale"):
        cells = f"  {result[key]:>7}" + "".join(f"  {b[key]:>7}" for b in baselines.values())
        lines.append(f"{key:<22}{'':>5}{cells}")
    for p in ("p50", "p95"):
        cells = f"  {result['latency_ms'][p]:>7.2f}" + "".join(
            f"  {b['latency_ms'][p]:>7.2f}" for b in baselines.values()
        )
        lines.append(f"{'latency ' + p + ' (ms)':<22}{'':>5}{cells}")
    degraded = result.get("load", {}).get("supersede_degraded", [])
    if degraded:
        lines.append(f"note: {len(degraded)} supersedes of the dataset were refused by the gates")
    return "\n".join(lines)
