"""`yuji import SOURCE ...`: bring history into yuji through the public write path.

Sources: `chatrecorder --db URL` (nonebot-plugin-chatrecorder), `qq-txt FILE --scope
group:ID` (QQ desktop 导出消息记录), `facts FILE.jsonl` (typed facts -> memories), `pack
FILE --scope S` (a memory pack from `yuji export`). Every import shows a progress bar,
prints counts (read, new, duplicate, refused with reasons: porting/counts.py), can be
interrupted and rerun without duplicates, and has `--dry-run`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from memory_core.cli.common import opened_core, scope_arg
from memory_core.cli.progress import progress_bar
from memory_core.porting import render_counts


def register(subparsers: Any) -> None:
    summary = (
        "导入历史：chatrecorder 的数据库、QQ 导出的消息记录、带类型的事实、记忆包"
        "（都能中断后重跑，不会重复）"
    )
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "import", help=summary, description=summary
    )
    sources = parser.add_subparsers(dest="source", required=True, metavar="来源", title="来源")
    dry_run = "只计数，什么也不写"

    recorder_says = "nonebot-plugin-chatrecorder 记录的消息（它的数据库，OneBot v11 的聊天）"
    recorder = sources.add_parser("chatrecorder", help=recorder_says, description=recorder_says)
    recorder.add_argument(
        "--db", required=True, metavar="URL", help="它的数据库 URL，例如 sqlite:///data/nb.db"
    )
    recorder.add_argument("--scope", type=scope_arg, help="只导入这个聊天（默认全部）")
    recorder.add_argument("--dry-run", action="store_true", help=dry_run)
    recorder.set_defaults(func=run_chatrecorder)

    qq_says = "QQ 电脑版“导出消息记录”的 .txt 文件，导入一个聊天的存档"
    qq = sources.add_parser("qq-txt", help=qq_says, description=qq_says)
    qq.add_argument("file", type=Path, metavar="FILE")
    qq.add_argument(
        "--scope", type=scope_arg, required=True, help="group:<群号> 或 private:<QQ 号>"
    )
    qq.add_argument("--encoding", default="utf-8", help="文件编码（默认 utf-8）")
    qq.add_argument("--dry-run", action="store_true", help=dry_run)
    qq.set_defaults(func=run_qq_txt)

    facts_says = "带类型的事实（JSON Lines：主体、键、值、有效期）导入为记忆"
    facts = sources.add_parser("facts", help=facts_says, description=facts_says)
    facts.add_argument("file", type=Path, metavar="FILE.jsonl")
    facts.add_argument("--scope", type=scope_arg, help="没写聊天的行放进这个聊天")
    facts.add_argument("--dry-run", action="store_true", help=dry_run)
    facts.set_defaults(func=run_facts)

    pack_says = "记忆包（`yuji export` 写的）恢复进一个聊天"
    pack = sources.add_parser("pack", help=pack_says, description=pack_says)
    pack.add_argument("file", type=Path, metavar="FILE")
    pack.add_argument("--scope", type=scope_arg, required=True, help="恢复进这个聊天")
    pack.add_argument("--dry-run", action="store_true", help=dry_run)
    pack.set_defaults(func=run_pack)


async def run_qq_txt(args: argparse.Namespace) -> int:
    async with opened_core() as core:
        with progress_bar(args.file.name, unit_bytes=True) as bar:
            counts, resumed = await core.porting.import_qq_txt(
                args.file, args.scope, encoding=args.encoding, dry_run=args.dry_run, progress=bar
            )
    if resumed:
        print(f"接着上次中断的导入，从第 {resumed} 字节继续")
    print(render_counts(counts, dry_run=args.dry_run))
    return 0


async def run_chatrecorder(args: argparse.Namespace) -> int:
    async with opened_core() as core:
        with progress_bar("chatrecorder", unit_bytes=False) as bar:
            counts, resumed = await core.porting.import_chatrecorder(
                args.db, scope=args.scope, dry_run=args.dry_run, progress=bar
            )
    if resumed:
        print(f"接着上次中断的导入，从第 {resumed} 条记录之后继续")
    print(render_counts(counts, dry_run=args.dry_run))
    return 0


async def run_facts(args: argparse.Namespace) -> int:
    async with opened_core() as core:
        with progress_bar(args.file.name, unit_bytes=True) as bar:
            counts = await core.porting.import_facts(
                args.file, scope=args.scope, dry_run=args.dry_run, progress=bar
            )
    print(render_counts(counts, dry_run=args.dry_run))
    return 0


async def run_pack(args: argparse.Namespace) -> int:
    data = json.loads(args.file.read_text(encoding="utf-8"))
    async with opened_core() as core:
        with progress_bar(args.file.name, unit_bytes=False) as bar:
            counts = await core.porting.import_pack(
                data, args.scope, dry_run=args.dry_run, progress=bar
            )
    print(render_counts(counts, dry_run=args.dry_run))
    return 0
