"""`yuji forget-person --scope S --user QQ`: forget one person in one chat.

Retracts their memories, replaces their archived text with a tombstone (the one
audited redaction path), deletes their image files, rebuilds the derived indexes and
cards, and names the backups that still hold the old data (`yuji backup --redact`
rewrites them). Rerun it to complete an interrupted request.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from memory_core.cli.common import opened_core, scope_arg
from memory_core.porting.forget import ForgetReport


def register(subparsers: Any) -> None:
    summary = "在一个聊天里忘掉一个人（记忆、消息、图片），和 /forget-me 相同；中断了就再跑一次"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "forget-person", help=summary, description=summary
    )
    parser.add_argument(
        "--scope", type=scope_arg, required=True, help="group:<群号> 或 private:<QQ 号>"
    )
    parser.add_argument("--user", required=True, help="这个人的 QQ 号")
    parser.add_argument("--json", action="store_true", help="打印 JSON")
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    user = str(args.user).strip()
    if not user.isdigit():
        raise ValueError(f"--user 要写 QQ 号，收到的是 {args.user!r}")
    async with opened_core() as core:
        report = await core.porting.forget_person(args.scope, user, requested_by="cli")
    print(json.dumps(report.to_json(), ensure_ascii=False) if args.json else render(report))
    return 0


def render(report: ForgetReport) -> str:
    lines = [
        f"已在 {report.scope} 忘掉 {report.user_id}（请求 #{report.request_id}）：",
        f"  对上的名字：{'、'.join(report.names)}",
        f"  撤回的记忆：{report.memories_retracted} 条"
        f"（关于这个人、或只以这个人的消息为证据的共 {len(report.memory_ids)} 条）",
        f"  换成墓碑的消息：这次 {report.messages_redacted} 条，共 {report.messages_total} 条",
        f"  删掉的图片文件：{report.files_deleted} 个",
        f"  改写的小结：{report.summaries_rewritten} 段，改写的卡片：{report.cards_rewritten} 张",
        "  全文索引：去掉了这些记忆；向量：下一次 `yuji embed` 时去掉",
    ]
    if report.backups:
        lines.append(f"  还有 {len(report.backups)} 个备份留着旧数据，直到保留期满删掉它们；")
        lines.append("  或者用 `yuji backup --redact` 现在就改写：")
        lines += [f"    {path}" for path in report.backups]
    return "\n".join(lines)
