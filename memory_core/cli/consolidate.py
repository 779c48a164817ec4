"""`yuji consolidate`: run one consolidation batch now, or show what is waiting.

    yuji consolidate                       pending messages and watermarks per chat
    yuji consolidate --once [--scope S]    one eligible batch (awake chats first, then the
                                           oldest waiting)
    yuji consolidate --once --force        ignore the token budget, the optional hourly cap
                                           and the 12 / 2 h thresholds
    yuji consolidate --reconcile           fail open batches, pull watermarks back (only
                                           while the bot is stopped: it fails its batch)

Exit status: 0 done or nothing to do, 1 the batch failed, 2 no model configured,
3 blocked: a batch of another process is still open (one whose process is gone is
failed first, so this means it still runs, or runs on another host).
"""

from __future__ import annotations

import argparse
from typing import Any

from memory_core.cli.common import opened_core, scope_arg
from memory_core.cli.status import BATCH_STATES
from memory_core.consolidation.runner import BatchReport
from memory_core.errors import LLMUnavailable
from memory_core.service import Yuji


def register(subparsers: Any) -> None:
    summary = "立即整理一批，或显示每个聊天待整理的消息和水位线"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "consolidate",
        help=summary,
        description=summary
        + "（退出码 0 完成或无事可做，1 这批失败，2 没有模型，3 被另一个进程开着的批次挡住）",
    )
    parser.add_argument("--once", action="store_true", help="最多整理一批")
    parser.add_argument("--scope", type=scope_arg, help="只看这个聊天，例如 group:123456")
    parser.add_argument(
        "--force", action="store_true", help="无视 token 预算、每小时上限和“12 条 / 2 小时”门槛"
    )
    parser.add_argument(
        "--reconcile",
        action="store_true",
        help="做启动时的修复：让开着的批次失败，退回水位线（只能在机器人停着时）",
    )
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    async with opened_core() as core:
        return await execute(core, args)


async def execute(core: Yuji, args: argparse.Namespace) -> int:
    if args.reconcile:
        report = await core.consolidation.reconcile()
        print(f"修复：{len(report.failed)} 个开着的批次判为失败")
        for fix in report.fixes:
            print(
                f"  {fix.scope}：已投递 {fix.delivered[0]} → {fix.delivered[1]}，"
                f"已确认 {fix.acked[0]} → {fix.acked[1]}"
            )
    if not args.once:
        if not args.reconcile:
            print(await render_pending(core, args.scope))
        return 0
    try:
        report = await core.consolidation.run_once(scope=args.scope, force=args.force)
    except LLMUnavailable as exc:
        print(f"没有整理：{exc}")
        return 2
    if report is None:
        if core.consolidation.blocked is not None:
            print(f"被挡住：{core.consolidation.blocked}")
            return 3
        print(f"无事可做：{core.consolidation.last_skip}")
        return 0
    print(render_report(report))
    return 0 if report.state == "done" else 1


OUTCOMES = {"extracted": "有记忆", "nothing": "没什么可记"}
"""What the model acknowledged a batch with, as the console says it."""


def render_report(report: BatchReport) -> str:
    """`BatchReport.describe()` (the log's line) in the manual's words, then what the
    model wrote; the error and refusals are the core's own words."""
    head = (
        f"批次 {report.batch_id} {report.scope} #{report.first_id}..#{report.last_id}"
        f"（{report.messages} 条消息，{report.chars} 字，第 {report.attempts} 次）："
    )
    if report.state == "done":
        outcome = OUTCOMES.get(report.outcome or "", report.outcome or "-")
        head += (
            f"完成，{outcome}；写了 {len(report.written)} 条，改了 {len(report.changed)} 条，"
            f"{report.tool_calls} 次工具调用里 {report.refused} 次被拒绝，{report.turns} 轮"
        )
    else:
        head += f"失败：{report.error}（连续 {report.consecutive_failures} 次）"
    lines = [head]
    if report.written:
        lines.append(f"  写下的记忆：{', '.join(str(i) for i in report.written)}")
    if report.changed:
        lines.append(f"  改动的记忆：{', '.join(str(i) for i in report.changed)}")
    if report.fragment_id is not None:
        lines.append(f"  小结：{report.fragment_id}")
    refusals = [r for r in report.tool_results if r.startswith('{"ok": false')]
    lines += [f"  被拒绝：{r}" for r in refusals[:10]]
    return "\n".join(lines)


async def render_pending(core: Yuji, scope: str | None) -> str:
    pendings = await core.consolidation.repo.pending(scope)
    if not pendings:
        return (f"{scope} " if scope else "") + "还没有存档的消息"
    lines: list[str] = []
    for p in pendings:
        status = await core.consolidation.status(p.scope)
        last = status.last_batch
        state = BATCH_STATES.get(last.state, last.state) if last else ""
        last_text = f"上一批 {last.id} {state}" if last else "还没有批次"
        oldest = f"，最早一条从 {p.oldest_at:%Y-%m-%d %H:%M}Z 等起" if p.oldest_at else ""
        lines.append(
            f"{p.scope}：待整理 {p.count} 条{oldest}；已投递 {status.cursor.delivered_id}，"
            f"已确认 {status.cursor.acked_id}；{last_text}"
        )
    return "\n".join(lines)
