"""The `yuji` command. Each subcommand is a module of this package exposing
`register(subparsers)`, which adds its parser and sets `run(args) -> int` (sync or
async) as the parser's `func` default.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import keyword
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from memory_core.errors import YujiError
from memory_core.settings import configured_values, misspelled_settings

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
    "env-example",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="yuji", description="鱼记: memory for a QQ group persona")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS:
        # A subcommand named like a keyword (`import`) lives in `import_.py`.
        module = name.replace("-", "_")
        module = f"{module}_" if keyword.iskeyword(module) else module
        importlib.import_module(f"{__name__}.{module}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    for line in misspelled_settings(configured_values(os.environ, Path())):
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
