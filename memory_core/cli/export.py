"""`yuji export --scope S [--out pack.json]`: one chat's memory pack (docs/memory-pack.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from memory_core.cli.common import opened_core, scope_arg


def register(subparsers: Any) -> None:
    summary = "写出一个聊天的记忆包（记忆和它们的版本、证据、卡片……）"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "export", help=summary, description=summary
    )
    parser.add_argument(
        "--scope", type=scope_arg, required=True, help="group:<群号> 或 private:<QQ 号>"
    )
    parser.add_argument("--out", type=Path, help="写进这个文件（默认打印到标准输出）")
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    async with opened_core(existing=True) as core:
        pack = await core.porting.export(args.scope)
    text = json.dumps(pack, ensure_ascii=False, indent=1)
    if args.out is None:
        sys.stdout.write(text + "\n")
        return 0
    write_file(args.out, text)
    print(f"已把 {args.scope} 的 {len(pack['memories'])} 条记忆导出到 {args.out}")
    return 0


def write_file(path: Path, text: str) -> None:
    """Written beside the target first, so an interrupted export leaves no half file."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text + "\n", encoding="utf-8")
    partial.replace(path)
