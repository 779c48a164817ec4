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
    summary = "把当前存储原样（保留每个 id）复制进一个空的 SQLite 或 PostgreSQL 存储，再比较两边"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "copy-store",
        help=summary,
        description=summary + "（退出码 0 一致，1 不一致，2 拒绝）",
    )
    parser.add_argument(
        "--to",
        required=True,
        metavar="URL",
        help="sqlite+aiosqlite:///path/yuji.db 或 postgresql+asyncpg://user:password@host/db",
    )
    parser.add_argument("--resume", action="store_true", help="接着一次中断了的、复制到 URL 的复制")
    parser.add_argument(
        "--chunk", type=int, default=CHUNK_ROWS, help=f"每个事务的行数（默认 {CHUNK_ROWS}）"
    )
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    with progress_bar("复制中", unit_bytes=False) as bar:
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
