"""`yuji restore BACKUP --to PATH|URL [--json]`: restore a backup into a NEW database.

BACKUP is a path, a backup name in `data/backups/`, or `latest`. The backup is
verified first (SHA-256 against its manifest, integrity, row counts, the drill); then
it is written to the target and that is checked again. A SQLite backup (`.db`) goes
to PATH, which must not exist and must not be the live database; to switch to it:
stop the bot, move PATH to `$YUJI_DATA_DIR/yuji.db` (delete the old `-wal`/`-shm`),
start the bot. A PostgreSQL dump (`.dump`) goes to URL, an existing EMPTY database
(`postgresql+asyncpg://...`; its drill runs on that server); to switch: point
YUJI_DATABASE_URL at it. Exit status: 0 restored, 1 the backup failed verification,
2 refused.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from memory_core.cli.backup import render_checks
from memory_core.cli.common import load_settings
from memory_core.errors import NotFound, ValidationError
from memory_core.ops.pg_backup import is_dump, restore_pg_backup, tools_for
from memory_core.ops.restore import (
    RestoreReport,
    find_backup,
    live_database_path,
    restore_backup,
)


def register(subparsers: Any) -> None:
    summary = "验证一个备份，恢复进一个新的数据库（退出码 0 已恢复，1 验证失败，2 拒绝）"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "restore", help=summary, description=summary
    )
    parser.add_argument("backup", metavar="BACKUP", help="备份文件、它的名字或 latest")
    parser.add_argument(
        "--to",
        required=True,
        metavar="PATH|URL",
        help="新文件（.db 备份），或一个空的 PostgreSQL 库（.dump 转储）",
    )
    parser.add_argument("--json", action="store_true", help="打印一个 JSON 对象")
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    to: str = args.to
    try:
        backup = find_backup(args.backup, settings.backups_dir)
        if is_dump(backup) != to.startswith("postgresql"):
            raise ValidationError(
                f"{backup.name} 只能恢复进"
                + ("一个 PostgreSQL URL" if is_dump(backup) else "一个新的 SQLite 文件，不是 URL")
            )
        if is_dump(backup):
            tools = await tools_for(to, settings.pg_dump)
            report = await restore_pg_backup(backup, to, tools)
        else:
            live = live_database_path(settings)
            report = await asyncio.to_thread(restore_backup, backup, Path(to), live_database=live)
    except (NotFound, ValidationError) as exc:
        print(f"拒绝：{exc}")
        return 2
    if args.json:
        print(json.dumps(as_dict(report), ensure_ascii=False))
    else:
        print(render(report))
    return 0 if report.ok else 1


def as_dict(report: RestoreReport) -> dict[str, Any]:
    return {
        "backup": str(report.backup),
        "target": str(report.target),
        "ok": report.ok,
        "written": report.written,
        "counts": report.counts,
        "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in report.checks],
    }


def render(report: RestoreReport) -> str:
    if report.ok:
        rows = sum(report.counts.values())
        head = f"已恢复 {report.backup} → {report.target}（真相表 {rows} 行）"
        tail = (
            "让 YUJI_DATABASE_URL 指向那个库，再启动机器人"
            if is_dump(report.backup)
            else "停下机器人，把它移到 $YUJI_DATA_DIR/yuji.db（删掉 yuji.db-wal/-shm），再启动"
        )
        return f"{head}\n{render_checks(report.checks)}\n要用它：{tail}"
    state = "恢复出的文件没通过检查" if report.written else "没有恢复"
    return f"{state}：{report.backup}\n{render_checks(report.checks)}"
