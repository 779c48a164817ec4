"""`yuji restore BACKUP --to PATH [--json]`: restore a backup into a NEW database file.

BACKUP is a path, a backup name in `data/backups/`, or `latest`. The backup is
verified first (SHA-256 against its manifest, integrity, row counts, the drill); then
it is written to PATH, which must not exist and must not be the live database, and
that file is checked again. To switch to it: stop the bot, move PATH to
`$YUJI_DATA_DIR/yuji.db` (delete the old `-wal`/`-shm`), start the bot.
Exit status: 0 restored, 1 the backup failed verification, 2 refused.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from memory_core.cli.backup import render_checks
from memory_core.cli.common import load_settings
from memory_core.errors import NotFound, ValidationError
from memory_core.ops.restore import (
    RestoreReport,
    find_backup,
    live_database_path,
    restore_backup,
)


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "restore", help="verify a backup and restore it into a new database file"
    )
    parser.add_argument("backup", metavar="BACKUP", help="a backup file, its name, or 'latest'")
    parser.add_argument("--to", required=True, type=Path, metavar="PATH", help="the new file")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    try:
        backup = find_backup(args.backup, settings.backups_dir)
        report = restore_backup(backup, args.to, live_database=live_database_path(settings))
    except (NotFound, ValidationError) as exc:
        print(f"refused: {exc}")
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
        head = f"restored {report.backup} -> {report.target} ({sum(report.counts.values())} truth rows)"
        tail = "stop the bot, move it to $YUJI_DATA_DIR/yuji.db (remove yuji.db-wal/-shm), start"
        return f"{head}\n{render_checks(report.checks)}\nto use it: {tail}"
    state = "restored file FAILED its checks" if report.written else "not restored"
    return f"{state}: {report.backup}\n{render_checks(report.checks)}"
