"""`yuji import SOURCE ...`: bring history into yuji through the public write path.

Sources: `chatrecorder --db URL` (nonebot-plugin-chatrecorder), `qq-txt FILE --scope group:ID` (QQ desktop 导出消息记录), `facts FILE.jsonl`
(typed facts -> memories), `pack FILE --scope S` (a memory pack from `yuji export`). Every import shows a progress bar, prints counts (read,
new, duplicate, refused with reasons), can be interrupted and rerun without
duplicates, and has `--dry-run`.
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
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "import", help="import history: a QQ text export, typed facts, a memory pack"
    )
    sources = parser.add_subparsers(dest="source", required=True, metavar="SOURCE")

    qq = sources.add_parser("qq-txt", help="a QQ desktop 导出消息记录 .txt file into one chat")
    qq.add_argument("file", type=Path)
    qq.add_argument("--scope", type=scope_arg, required=True, help="group:ID or private:ID")
    qq.add_argument("--encoding", default="utf-8", help="file encoding (default utf-8)")
    qq.add_argument("--dry-run", action="store_true", help="count only, write nothing")
    qq.set_defaults(func=run_qq_txt)

    recorder = sources.add_parser(
        "chatrecorder", help="nonebot-plugin-chatrecorder's database (OneBot v11 chats)"
    )
    recorder.add_argument("--db", required=True, metavar="URL", help="e.g. sqlite:///data/nb.db")
    recorder.add_argument("--scope", type=scope_arg, help="only this chat (default: every chat)")
    recorder.add_argument("--dry-run", action="store_true", help="count only, write nothing")
    recorder.set_defaults(func=run_chatrecorder)

    facts = sources.add_parser("facts", help="typed facts (JSON lines) as memories")
    facts.add_argument("file", type=Path)
    facts.add_argument("--scope", type=scope_arg, help="chat for lines that name none")
    facts.add_argument("--dry-run", action="store_true", help="count only, write nothing")
    facts.set_defaults(func=run_facts)

    pack = sources.add_parser("pack", help="a yuji memory pack (from `yuji export`) into a chat")
    pack.add_argument("file", type=Path)
    pack.add_argument("--scope", type=scope_arg, required=True, help="the chat to restore into")
    pack.add_argument("--dry-run", action="store_true", help="count only, write nothing")
    pack.set_defaults(func=run_pack)


async def run_qq_txt(args: argparse.Namespace) -> int:
    async with opened_core() as core:
        with progress_bar(args.file.name, unit_bytes=True) as bar:
            counts, resumed = await core.porting.import_qq_txt(
                args.file, args.scope, encoding=args.encoding, dry_run=args.dry_run, progress=bar
            )
    if resumed:
        print(f"resumed an interrupted import at byte {resumed}")
    print(render_counts(counts, dry_run=args.dry_run))
    return 0


async def run_chatrecorder(args: argparse.Namespace) -> int:
    async with opened_core() as core:
        with progress_bar("chatrecorder", unit_bytes=False) as bar:
            counts, resumed = await core.porting.import_chatrecorder(
                args.db, scope=args.scope, dry_run=args.dry_run, progress=bar
            )
    if resumed:
        print(f"resumed an interrupted import after record {resumed}")
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
