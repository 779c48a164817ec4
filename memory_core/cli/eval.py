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
from .parser import columns

UNANSWERABLE = NEGATIVE_TIERS | {CHATTER}


def register(subparsers: Any) -> None:
    summary = "在数据集（docs/eval-format.md）上测回忆，用一个临时库，不碰真正的数据"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "eval", help=summary, description=summary
    )
    parser.add_argument("dataset", type=Path, nargs="*", metavar="DATASET")
    parser.add_argument("--json", action="store_true", help="打印一个 JSON 对象")
    parser.add_argument(
        "--distractors", type=int, default=0, metavar="N", help="给每个聊天加 N 条无关的记忆"
    )
    parser.add_argument(
        "--clones", type=int, default=0, metavar="N", help="加 N 条期望记忆的近似副本"
    )
    parser.add_argument(
        "--baselines",
        action="store_true",
        help="在同一索引上并排跑基线（FTS5 bm25 前五、纯向量前五、两者的 RRF 混合）",
    )
    parser.add_argument(
        "--vector",
        choices=("on", "shadow", "off"),
        default="on",
        help="这次的稠密检索模式（装好数据后再算向量；默认 on）",
    )
    parser.add_argument(
        "--database",
        default="",
        metavar="URL",
        help="在这台 PostgreSQL 服务器上跑（postgresql+asyncpg://...）：为这次新建一个库，"
        "结束后删掉",
    )
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="为配置的嵌入模型和重排模型（YUJI_EMBED_*、YUJI_VECTOR_MODEL_PATH、YUJI_RERANK_*）"
        "在自带的训练语料（或给出的 DATASET）上拟合相关度权重和阈值，写进 "
        "YUJI_CALIBRATION_DIR，并打印留出聊天上的数字",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="FILE",
        help="和 --calibrate 一起用：另把嵌入模型的权重写进这个文件",
    )
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    if args.calibrate:
        return await calibrate(args.dataset, args.out)
    if len(args.dataset) != 1:
        raise UsageError("yuji eval 一次测一个 DATASET（或者用 --calibrate 拟合）")
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
        print(f"另外写了 {out}（设 YUJI_RELEVANCE_WEIGHTS={out}，嵌入模型就用它）")
    return 0


def render(name: str, result: dict[str, Any]) -> str:
    """A table: one row per tier, yuji (any band, then sure only) beside each baseline."""
    baselines: dict[str, dict[str, Any]] = result.get("baselines", {})
    head = (
        _pad("层", 26)
        + _pad("n", 5, right=True)
        + "".join("  " + _pad(word, 7, right=True) for word in ("yuji", "确定", "全空"))
        + "  "
        + _pad("过期", 5, right=True)
        + "".join(f"  {b:>10}" for b in baselines)
    )
    database = result.get("load", {}).get("database")
    lines = [f"数据集：{name}" + (f"（在 {database} 上）" if database else ""), head]
    for tier, row in result["tiers"].items():
        kind = "有注入" if tier in UNANSWERABLE else "hit@5"
        empty = row.get("empty_rate", 0.0)
        cells = f"  {row['rate']:>7.3f}  {row['sure_rate']:>7.3f}  {empty:>7.3f}  {row['stale']:>5}"
        cells += "".join(f"  {b['tiers'][tier]['rate']:>10.3f}" for b in baselines.values())
        lines.append(f"{_pad(f'{tier}（{kind}）', 26)}{row['n']:>5}{cells}")
    for key, label in (("false_recall", "误召回"), ("leakage", "泄漏"), ("stale", "过期")):
        cells = f"  {result[key]:>7}  {'':>7}  {'':>7}  {'':>5}" + "".join(
            f"  {b[key]:>10}" for b in baselines.values()
        )
        lines.append(f"{_pad(label, 26)}{'':>5}{cells}")
    if result.get("carried"):  # carried as the rule allows: never counted as leaked
        lines.append(f"{_pad('带过来（在别的群说过）', 26)}{'':>5}  {result['carried']:>7}")
    for p in ("p50", "p95"):
        cells = f"  {result['latency_ms'][p]:>7.2f}  {'':>7}  {'':>7}  {'':>5}" + "".join(
            f"  {b['latency_ms'][p]:>10.2f}" for b in baselines.values()
        )
        lines.append(f"{_pad(f'延迟 {p}（ms）', 26)}{'':>5}{cells}")
    lines.append(
        "yuji：期望的记忆以任一档位注入（无解的层：注入了任何东西）；确定：同上，只算以"
        "确定档注入的；全空：什么也没给的问题占多少；过期：注入了 expect_none 的记忆"
        "（temporal：问现在的情况时注入了被取代的旧版本）"
    )
    degraded = result.get("load", {}).get("supersede_degraded", [])
    if degraded:
        lines.append(f"注意：数据集里有 {len(degraded)} 次取代被把关拒绝了")
    return "\n".join(lines)


def _pad(text: str, width: int, *, right: bool = False) -> str:
    """`text` filled with spaces to `width` terminal columns: a CJK character takes two
    (str.format counts it as one, which would shift every column after it)."""
    fill = " " * max(width - columns(text), 0)
    return fill + text if right else text + fill
