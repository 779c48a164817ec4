"""`yuji reindex`: rebuild the derived full-text index of memories from the truth tables."""

from __future__ import annotations

import argparse
from typing import Any

from memory_core.cli.common import opened_core


def register(subparsers: Any) -> None:
    summary = "从记忆表重建记忆的全文索引（派生数据）"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "reindex", help=summary, description=summary
    )
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    del args
    async with opened_core() as core:
        count = await core.recall.reindex()
    print(f"已为 {count} 条记忆重建全文索引")
    return 0
