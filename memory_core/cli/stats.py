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
    summary = "存档里有什么：每个聊天、每种来源的消息数，附件按状态分，占用大小"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "stats", help=summary, description=summary
    )
    parser.add_argument("--json", action="store_true", help="打印一个 JSON 对象")
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


SOURCES = {"realtime": "实时", "backfill": "补拉", "migrated": "导入"}
ATTACHMENT_STATES = {"stored": "已存", "cleaned": "已清理", "failed": "下载失败"}
"""Codes the archive stores, in the manual's words (an unknown code is shown as it is)."""


def render(stats: ArchiveStats) -> str:
    data = as_dict(stats)
    lines = [f"存档消息：{data['experiences']['total']} 条"]
    for scope, by_source in sorted(stats.counts.experiences.items()):
        sources = "，".join(
            f"{SOURCES.get(source, source)} {count}" for source, count in sorted(by_source.items())
        )
        lines.append(f"  {scope}：{sum(by_source.values())}（{sources}）")
    statuses = "，".join(
        f"{ATTACHMENT_STATES.get(s, s)} {n}" for s, n in sorted(stats.counts.attachments.items())
    )
    lines.append(f"附件：{statuses or '无'}")
    lines.append(f"数据库：{_size(stats.database_bytes)}")
    lines.append(f"附件文件：{_size(stats.attachment_bytes)}")
    return "\n".join(lines)


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"
