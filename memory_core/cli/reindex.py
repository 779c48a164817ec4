"""`yuji reindex`: rebuild the derived full-text index of memories from the truth tables."""

from __future__ import annotations

import argparse
from typing import Any

from memory_core.cli.common import opened_core


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "reindex", help="rebuild the memory full-text index from the memories table"
    )
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    del args
    async with opened_core() as core:
        count = await core.recall.reindex()
    print(f"reindexed {count} memories")
    return 0
