"""`yuji recall "question" --scope group:123 [--at TIME] [--json]`: what recall would
inject for the question in that chat (at that instant): each memory's stage, its P
(the relevance model's probability that it answers), its band (`sure`, or `related`:
never to be stated as fact) and the features that moved P most."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from typing import Any

from memory_core.cli.common import opened_core, scope_arg
from memory_core.clock import as_utc
from memory_core.recall.why import why_words
from memory_core.types import RecallResult


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "recall", help="show what recall would inject for a question in one chat"
    )
    parser.add_argument("question")
    parser.add_argument("--scope", type=scope_arg, required=True, help="group:<id> or private:<id>")
    parser.add_argument(
        "--at", type=_instant, default=None, help="ISO time with zone (default: now)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _instant(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise argparse.ArgumentTypeError("--at needs a timezone, e.g. 2026-11-20T21:30:00+08:00")
    return as_utc(parsed)


async def run(args: argparse.Namespace) -> int:
    async with opened_core(existing=True) as core:
        result = await core.recall.recall(args.scope, args.question, now=args.at)
    print(
        json.dumps(as_dict(result), ensure_ascii=False, indent=2) if args.json else render(result)
    )
    return 0


def as_dict(result: RecallResult) -> dict[str, Any]:
    return {
        "retrospective": result.retrospective,
        "items": [
            {
                "id": item.memory.id,
                "stage": item.stage,
                "score": item.score,
                "band": item.band,
                "why": [[name, value] for name, value in item.why],
                "reason": item.reason,
                "type": item.memory.type,
                "subject": item.memory.subject,
                "content": item.memory.content,
            }
            for item in result.items
        ],
        "trace": list(result.trace),
    }


def render(result: RecallResult) -> str:
    if not result.items:
        return "（没有可注入的记忆）\n" + "\n".join(f"  · {t}" for t in result.trace)
    lines: list[str] = []
    for item in result.items:
        lines.append(
            f"#{item.memory.id} [{item.stage} P={item.score:.2f} {item.band}] {item.memory.content}"
        )
        lines.append(f"    {item.reason}")
        if item.why:
            lines.append(f"    因为：{why_words(item.why)}")
    return "\n".join(lines)
