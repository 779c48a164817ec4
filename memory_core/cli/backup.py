"""`yuji backup [--list | --verify BACKUP | --redact] [--json]`: verified backups from the shell.

With no option it makes one backup now (SQLite's online backup API, or `pg_dump` of
a PostgreSQL store, so the bot may keep running) with every check of the scheduled one, prunes by retention, and alerts on
failure like the bot does. `--list` shows the backups and their checks; `--verify`
runs the checks again on an existing backup (a path, a name, or `latest`; a dump is
restored into a scratch database on the configured server); `--redact`
rewrites every backup without the people forgotten since (porting/backup_redact.py).
Exit status 1 when the backup (or the verification) failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import asdict
from typing import Any

from memory_core.cli.common import load_settings, opened_core
from memory_core.errors import NotFound
from memory_core.ops.backup import verify_backup
from memory_core.ops.capacity import human_bytes
from memory_core.ops.manifest import BackupManifest, Check, list_manifests
from memory_core.ops.orphans import Orphan, find_orphans
from memory_core.ops.pg_backup import is_dump, tools_for, verify_pg_backup
from memory_core.ops.restore import find_backup
from memory_core.ops.status import CHECK_NAMES

MORE_CHECKS = {"file": "文件", "manifest": "清单"}
"""Checks a verification adds to those of `CHECK_NAMES` (ops/backup.py)."""


def register(subparsers: Any) -> None:
    summary = "立即做一次经过验证的备份（或列出、重新检查、改写已有的备份）"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "backup", help=summary, description=summary + "；失败时退出码 1"
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--list", action="store_true", help="列出每个备份和它的检查结果")
    group.add_argument(
        "--verify", metavar="BACKUP", help="重新检查一个已有备份（路径、名字或 latest）"
    )
    group.add_argument("--redact", action="store_true", help="把已有的备份改写成不含之后被忘记的人")
    parser.add_argument("--json", action="store_true", help="打印 JSON")
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    if args.list:
        manifests = list_manifests(settings.backups_dir)
        if args.json:
            print(json.dumps([json.loads(m.to_json()) for m in manifests], ensure_ascii=False))
            return 0
        print(render_list(manifests) if manifests else f"{settings.backups_dir} 里没有备份")
        orphans = find_orphans(settings.backups_dir)
        if orphans:
            print(render_orphans(orphans, settings.backup_orphan_after_s))
        return 0
    if args.verify:
        try:
            path = find_backup(args.verify, settings.backups_dir)
        except NotFound as exc:
            print(exc)
            return 1
        if is_dump(path):
            tools = await tools_for(settings.sqlalchemy_url, settings.pg_dump)
            checks, _ = await verify_pg_backup(path, settings.sqlalchemy_url, tools)
        else:
            checks, _ = await asyncio.to_thread(verify_backup, path)
        ok = all(c.ok for c in checks)
        if args.json:
            print(json.dumps({"file": str(path), "ok": ok, "checks": [asdict(c) for c in checks]}))
        else:
            print(f"{path}：{'验证通过' if ok else '验证失败'}\n{render_checks(checks)}")
        return 0 if ok else 1
    if args.redact:
        async with opened_core(settings) as core:
            results = await core.porting.redact_backups()
        for result in results:
            print(f"{'已改写' if result.ok else '失败  '} {result.path}：{result.detail}")
        if not results:
            print(f"{settings.backups_dir} 里没有备份")
        return 0 if all(r.ok for r in results) else 1
    async with opened_core(settings) as core:
        manifest = await core.ops.backup(reason="cli")
    print(manifest.to_json() if args.json else render_manifest(manifest, str(settings.backups_dir)))
    return 0 if manifest.ok else 1


def check_name(name: str) -> str:
    return CHECK_NAMES.get(name) or MORE_CHECKS.get(name, name)


def render_checks(checks: tuple[Check, ...] | list[Check]) -> str:
    """One line per check: passed or not, its Chinese name and code, and its detail
    (the check's own words, as the manifest keeps them)."""
    return "\n".join(
        f"  {'通过' if c.ok else '失败'} {check_name(c.name)}（{c.name}）：{c.detail}"
        for c in checks
    )


def render_manifest(manifest: BackupManifest, folder: str) -> str:
    head = "验证通过" if manifest.ok else "验证失败"
    rows = sum(manifest.backup_counts.values())
    lines = [
        f"备份{head}：{folder}/{manifest.file}",
        f"  {human_bytes(manifest.size_bytes)}，真相表 {rows} 行，"
        f"用时 {manifest.duration_s:.2f} 秒，sha256 {manifest.sha256[:16] or '-'}",
        render_checks(manifest.checks),
    ]
    if manifest.mirrored_to:
        lines.append(f"  已镜像到 {manifest.mirrored_to}")
    return "\n".join(lines)


def render_list(manifests: list[BackupManifest]) -> str:
    return "\n".join(
        f"{m.created_at:%Y-%m-%d %H:%M:%S}Z  {'通过' if m.ok else '失败'}  "
        f"{human_bytes(m.size_bytes):>9}  {m.file}"
        + ("" if m.ok else "（" + "、".join(check_name(c.name) for c in m.failed_checks) + "）")
        for m in manifests
    )


def render_orphans(orphans: list[Orphan], after_s: int) -> str:
    head = (
        f"被杀掉的备份留下的文件（没有清单；满 {after_s / 3600:g} 小时后，下一次备份会删掉它们）："
    )
    rows = [
        f"  {human_bytes(o.size_bytes):>9}  {o.age_s / 3600:5.1f} 小时  {o.name}" for o in orphans
    ]
    return "\n".join([head, *rows])
