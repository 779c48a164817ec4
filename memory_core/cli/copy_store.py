"""`yuji copy-store --to URL [--resume]`: copy the configured store, every id kept, into
an empty SQLite or PostgreSQL store, with a progress bar; carry the memory vectors
over and compare the two: their rows, their checksums, and what a few sample
questions recall on each (cli/copy_check.py).

Exit status: 0 the copy matches its source, 1 it differs, 2 refused (a target holding
rows the copy did not write, an unfinished copy without `--resume`: one line).
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from memory_core.cli.common import load_settings
from memory_core.cli.copy_check import check_copy
from memory_core.cli.progress import progress_bar
from memory_core.clock import SystemClock
from memory_core.porting.copy_report import report_lines
from memory_core.porting.copy_store import CHUNK_ROWS, copy_store


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "copy-store", help="copy the store, every id kept, into an empty SQLite or PostgreSQL one"
    )
    parser.add_argument(
        "--to",
        required=True,
        metavar="URL",
        help="sqlite+aiosqlite:///path/yuji.db or postgresql+asyncpg://user:password@host/db",
    )
    parser.add_argument(
        "--resume", action="store_true", help="continue a copy into URL that was cut short"
    )
    parser.add_argument(
        "--chunk", type=int, default=CHUNK_ROWS, help=f"rows per transaction (default {CHUNK_ROWS})"
    )
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    with progress_bar("copying", unit_bytes=False) as bar:
        report = await copy_store(
            settings.sqlalchemy_url,
            args.to,
            clock=SystemClock(),
            resume=args.resume,
            progress=bar,
            chunk_rows=max(args.chunk, 1),
            busy_timeout_s=settings.db_busy_timeout_s,
        )
    if report.ok:  # the rows match: now the vectors, and what both recall
        check = await check_copy(settings, args.to)
        report = dataclasses.replace(report, carried=check.carried, recalled=check.answers)
    print("\n".join(report_lines(report)))
    return 0 if report.ok else 1
