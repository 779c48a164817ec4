"""The `yuji` command. Each subcommand is a module of this package exposing
`register(subparsers)`, which adds its parser and sets `run(args) -> int` (sync or
async) as the parser's `func` default.

What it prints for people is Chinese, like the manual (docs/cli.md); what it prints
for programs (`--json`) keeps its English keys and values.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import keyword
import sys
from collections.abc import Sequence
from pathlib import Path

from memory_core.cli.common import configured, give
from memory_core.cli.parser import YujiParser
from memory_core.errors import YujiError
from memory_core.settings import misspelled_settings

SUBCOMMANDS: tuple[str, ...] = (
    "backup",
    "restore",
    "copy-store",
    "stats",
    "embed",
    "consolidate",
    "nightly",
    "status",
    "eval",
    "recall",
    "reindex",
    "import",
    "demo",
    "export",
    "forget-person",
    "people",
    "followups",
    "env-example",
)


def build_parser() -> argparse.ArgumentParser:
    parser = YujiParser(
        prog="yuji",
        description="鱼记：群聊人设的长期记忆。`yuji 子命令 --help` 列出子命令的全部选项。",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        metavar="DIR",
        help="数据目录（写在子命令前面；和设置 YUJI_DATA_DIR=DIR 完全一样，默认 data/）",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="子命令", title="子命令")
    for name in SUBCOMMANDS:
        # A subcommand named like a keyword (`import`) lives in `import_.py`.
        module = name.replace("-", "_")
        module = f"{module}_" if keyword.iskeyword(module) else module
        importlib.import_module(f"{__name__}.{module}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    give({} if args.data_dir is None else {"YUJI_DATA_DIR": str(args.data_dir)})
    for line in misspelled_settings(configured(Path())):
        print(f"yuji: warning: {line}", file=sys.stderr)
    try:
        result = args.func(args)
        if inspect.iscoroutine(result):
            result = asyncio.run(result)
    except (YujiError, OSError, ValueError) as error:
        # What the operator got wrong (a path, an id, a file's content) deserves one
        # line, not a traceback; anything else is a bug and keeps its traceback.
        print(f"yuji {args.command}: {error}", file=sys.stderr)
        return 2
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
