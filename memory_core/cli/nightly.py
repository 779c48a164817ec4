"""`yuji nightly`: run (or resume) the nightly pipeline now and print each step.

    yuji nightly                          every chat, every day not finished yet
    yuji nightly --day 2026-11-20         that day only (it must have ended at the cutoff)
    yuji nightly --scope group:123456     one chat
    yuji nightly --status                 the last night of each chat, without running

A manual run always tries, even when a chat's circuit is open; success closes it.
Exit status: 0 every step done or skipped, 1 a step failed, 2 a step waits for a model,
3 another process is running a step right now.
"""

from __future__ import annotations

import argparse
from typing import Any

from memory_core.cli.common import opened_core, scope_arg
from memory_core.errors import ValidationError
from memory_core.nightly.status import STATE_WORDS, STEP_LABELS, format_when, report_lines
from memory_core.service import Yuji


def register(subparsers: Any) -> None:
    summary = "立即运行（或接着运行）夜间整理：结算、小传、卡片、状态、事件、回收"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "nightly",
        help=summary,
        description=summary
        + "（退出码 0 每步完成或跳过，1 某步失败，2 某步在等模型，3 另一个进程正在做）",
    )
    parser.add_argument(
        "--day", metavar="YYYY-MM-DD", help="只做这一天（按 YUJI_TIMEZONE，必须已过截止时刻）"
    )
    parser.add_argument("--scope", type=scope_arg, help="只做这个聊天，例如 group:123456")
    parser.add_argument("--status", action="store_true", help="只显示每个聊天的上一晚，什么也不跑")
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    async with opened_core() as core:
        return await execute(core, args)


async def execute(core: Yuji, args: argparse.Namespace) -> int:
    if args.status:
        for scope in [args.scope] if args.scope else await core.nightly.scopes():
            last = await core.nightly.last_run(scope)
            steps = " ".join(
                f"{STEP_LABELS.get(s.step, s.step)}={STATE_WORDS.get(s.state, s.state)}"
                for s in last.steps
            )
            health = "已熔断" if last.circuit_open else f"连续失败 {last.consecutive_failures} 次"
            print(
                f"{scope} {last.day or '-'} {steps or '还没有跑过'}（{health}；"
                f"上次成功 {format_when(last.last_success_at, core.nightly.tz)}）"
            )
        return 0
    if core.models.nightly is None:
        print("注意：没有配置模型（YUJI_LLM_* 或 YUJI_NIGHTLY_LLM_*）；有材料的步骤会等着")
    try:
        reports = await core.nightly.run(day=args.day, scope=args.scope)
    except (ValidationError, ValueError) as exc:
        print(f"拒绝：{exc}")
        return 1
    for line in report_lines(reports):
        print(line)
    if not reports:
        print("无事可做：还没有任何聊天")
    outcomes = {r.outcome for r in reports}
    if "failed" in outcomes:
        return 1
    if "waiting" in outcomes:
        return 2
    return 3 if "blocked" in outcomes else 0
