"""`yuji recall "question" --scope group:123 [--at TIME] [--json]`: what recall would
inject for the question in that chat (at that instant): each memory's stage, its P
(the relevance model's probability that it answers), its band (`sure`, or `related`:
never to be stated as fact) and the features that moved P most. A chat the store has
never heard of (no message, no memory) is refused, exit status 2: its empty answer
would read like a real one."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from typing import Any

from memory_core.chat.texts import tag
from memory_core.cli.common import opened_core, scope_arg
from memory_core.cli.recall_trace import trace_words
from memory_core.clock import as_utc
from memory_core.errors import NotFound
from memory_core.recall.why import why_words
from memory_core.service import Yuji
from memory_core.types import Asker, RecallResult, scope_platform

KNOWN_SHOWN = 5
"""How many known chats the refusal of an unknown one names."""


def register(subparsers: Any) -> None:
    summary = "一个问题在一个聊天里会回忆起什么：每条记忆的阶段、P、档位和原因"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "recall", help=summary, description=summary
    )
    parser.add_argument("question", metavar="问题")
    parser.add_argument(
        "--scope", type=scope_arg, required=True, help="聊天：group:<群号> 或 private:<QQ 号>"
    )
    parser.add_argument(
        "--at",
        type=_instant,
        default=None,
        metavar="TIME",
        help="在这个时刻回忆：带时区的 ISO 时间（默认现在）",
    )
    parser.add_argument(
        "--as",
        dest="asker",
        default=None,
        metavar="ID",
        help="以这个成员（QQ 号等）的身份问：问题里的“我”就是他（名字取人物索引里他在这个聊天用过的）",
    )
    parser.add_argument("--json", action="store_true", help="打印一个 JSON 对象")
    parser.set_defaults(func=run)


async def asker_in(core: Yuji, scope: str, user_id: str) -> Asker:
    """`user_id` with the names the person index has for them in `scope`, latest first
    (none before `yuji people rebuild` on a store older than the index)."""
    person = await core.people.person_of(scope_platform(scope), user_id)
    said = await core.people.names_of(scope, person) if person is not None else []
    names = [n.name for n in said]
    return Asker(user_id, tuple(dict.fromkeys(names)))


def _instant(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise argparse.ArgumentTypeError("--at 要带时区，例如 2026-11-20T21:30:00+08:00")
    return as_utc(parsed)


async def run(args: argparse.Namespace) -> int:
    async with opened_core(existing=True) as core:
        await _known(core, args.scope)
        asker = await asker_in(core, args.scope, args.asker) if args.asker else None
        result = await core.recall.recall(args.scope, args.question, now=args.at, asker=asker)
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


async def _known(core: Yuji, scope: str) -> None:
    """Refuse a chat with no archived message and no memory (a typo in the id, a chat
    of another store): recall there answers nothing, which says nothing."""
    chats = set(await core.archive.scopes()) | set(await core.memory_repo.counts_by_scope())
    if scope in chats:
        return
    known = sorted(chats)
    listed = "、".join(known[:KNOWN_SHOWN]) + ("…" if len(known) > KNOWN_SHOWN else "")
    raise NotFound(
        f"没有聊天 {scope}：这个库里没有它的消息，也没有它的记忆"
        + (
            f"（已知的聊天：{listed}；`yuji status` 列出全部）"
            if known
            else "（库里还没有任何聊天）"
        )
    )


def render(result: RecallResult) -> str:
    if not result.items:
        return "（没有可注入的记忆）\n" + "\n".join(f"  · {trace_words(t)}" for t in result.trace)
    lines: list[str] = []
    for item in result.items:
        lines.append(
            f"#{item.memory.id}〔{tag(item.stage, item.score, band=item.band)}〕{item.memory.content}"
        )
        lines.append(f"    {item.reason}")
        if item.why:
            lines.append(f"    因为：{why_words(item.why)}")
    return "\n".join(lines)
