"""`yuji stats [--json]`: what the archive holds.

Experiences per chat and source, attachments by status, and the bytes on disk of the
database and of the attachment files.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from memory_core.archive import ArchiveStats
from memory_core.cli.common import opened_core


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "stats", help="archive counts per chat and source, attachments, sizes"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    async with opened_core(existing=True) as core:
        stats = await core.archive.stats()
    print(json.dumps(as_dict(stats), ensure_ascii=False, indent=2) if args.json else render(stats))
    return 0


def as_dict(stats: ArchiveStats) -> dict[str, Any]:
    per_scope = stats.counts.experiences
    return {
        "experiences": {
            "total": sum(sum(by_source.values()) for by_source in per_scope.values()),
            "by_scope": per_scope,
        },
        "attachments": {
            "by_status": stats.counts.attachments,
            "stored_bytes": stats.counts.attachment_bytes_stored,
        },
        "bytes": {"database": stats.database_bytes, "attachments": stats.attachment_bytes},
    }


def render(stats: ArchiveStats) -> str:
    data = as_dict(stats)
    lines = [f"experiences: {data['experiences']['total']}"]
    for scope, by_source in sorted(stats.counts.experiences.items()):
        sources = ", ".join(f"{source} {count}" for source, count in sorted(by_source.items()))
        lines.append(f"  {scope}: {sum(by_source.values())} ({sources})")
    statuses = ", ".join(f"{s} {n}" for s, n in sorted(stats.counts.attachments.items()))
    lines.append(f"attachments: {statuses or 'none'}")
    lines.append(f"database: {_size(stats.database_bytes)}")
    lines.append(f"attachment files: {_size(stats.attachment_bytes)}")
    return "\n".join(lines)


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"
