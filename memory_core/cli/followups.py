"""`yuji followups [--scope S] [--at TIME] [--json]`: the follow-ups of one chat or of
every chat (memory_core/followups/), in any state: what `/followups` shows a chat,
for operators. Each is keyed by its plan's memory id."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memory_core.cli.common import opened_core, scope_arg
from memory_core.followups import FollowUp
from memory_core.followups.texts import STATE_WORDS


def register(subparsers: Any) -> None:
    summary = "成员自己说过的有日期的计划：哪天的事、哪几天可以问、现在是什么状态"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "followups", help=summary, description=summary
    )
    parser.add_argument("--scope", type=scope_arg, help="只看这个聊天（默认全部）")
    parser.add_argument(
        "--at", type=_instant, metavar="TIME", help="在这个时刻（带时区的 ISO 格式，默认现在）"
    )
    parser.add_argument("--json", action="store_true", help="打印一个 JSON 列表")
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    async with opened_core(existing=True) as core:
        found = await core.followups.listing(args.scope, args.at)
    rows = [as_json(f) for f in found]
    print(json.dumps(rows, ensure_ascii=False, indent=2) if args.json else render(found))
    return 0


def as_json(f: FollowUp) -> dict[str, Any]:
    return {
        "id": f.memory.id,
        "scope": f.memory.scope,
        "person": f.person,
        "name": f.memory.subject,
        "memory_id": f.memory.id,
        "text": f.memory.content,
        "date": f.window.day.isoformat(),
        "window": [f.window.first.isoformat(), f.window.last.isoformat()],
        "state": f.state,
        "offers": f.offers,
    }


def render(found: Sequence[FollowUp]) -> str:
    if not found:
        return "（没有跟进）"
    return "\n".join(
        f"#{f.memory.id} {f.memory.scope} {f.memory.subject}（{f.person}）："
        f"{f.memory.content}｜{f.window.day} 的事，{f.window.first}～{f.window.last} 可以问｜"
        f"{STATE_WORDS[f.state]}"
        for f in found
    )


def _instant(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        raise argparse.ArgumentTypeError(f"要带时区：{text!r}（例如 2026-03-11T10:00+08:00）")
    return value
