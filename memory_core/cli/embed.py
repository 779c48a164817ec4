"""`yuji embed [--rebuild] [--json]`: bring the vector index up to date.

Runs in its own process (the bot's scheduler starts it after consolidation and the
nightly run), embeds every memory whose vector is missing or stale with the
configured model (`YUJI_EMBED_*` an embeddings API, `YUJI_VECTOR_MODEL_PATH`, default
the bundled e5) and writes the
index under `data/vectors/`. `--rebuild` ignores the existing index.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from memory_core.cli.common import load_settings, opened_core
from memory_core.vectors.build import EmbedReport, sync_index
from memory_core.vectors.factory import embedder_from_settings


def register(subparsers: Any) -> None:
    summary = "把缺失或过期的记忆向量算出来（data/vectors/，PostgreSQL 上在数据库里）"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "embed", help=summary, description=summary
    )
    parser.add_argument("--rebuild", action="store_true", help="不管已有的索引，全部重算")
    parser.add_argument("--json", action="store_true", help="打印一个 JSON 对象")
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    async with opened_core(settings) as core:
        # An embeddings API counts its calls (llm_usage, job `embed`) in this store.
        embedder = embedder_from_settings(settings, core.provider_usage)
        try:
            report = await sync_index(
                core.memory_repo, embedder, core.vector_place, rebuild=args.rebuild
            )
        finally:
            close = getattr(embedder, "close", None)
            if callable(close):
                close()
    print(json.dumps(report.as_dict(), ensure_ascii=False) if args.json else render(report))
    return 0


def render(report: EmbedReport) -> str:
    return (
        f"记忆向量（{report.model_id}）：共 {report.total} 条记忆，新算 {report.embedded} 条，"
        f"沿用 {report.reused} 条，去掉 {report.dropped} 条 → {report.folder}"
    )
