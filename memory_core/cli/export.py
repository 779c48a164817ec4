"""`yuji export --scope S [--out pack.json]`: one chat's memory pack (docs/memory-pack.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from memory_core.cli.common import opened_core, scope_arg


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "export", help="write one chat's memory pack (memories, versions, evidence, cards...)"
    )
    parser.add_argument("--scope", type=scope_arg, required=True, help="group:ID or private:ID")
    parser.add_argument("--out", type=Path, help="file to write (default: standard output)")
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    async with opened_core(existing=True) as core:
        pack = await core.porting.export(args.scope)
    text = json.dumps(pack, ensure_ascii=False, indent=1)
    if args.out is None:
        sys.stdout.write(text + "\n")
        return 0
    write_file(args.out, text)
    print(f"exported {len(pack['memories'])} memories of {args.scope} to {args.out}")
    return 0


def write_file(path: Path, text: str) -> None:
    """Written beside the target first, so an interrupted export leaves no half file."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text + "\n", encoding="utf-8")
    partial.replace(path)
