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
from memory_core.consolidation.runner import BatchReport
from memory_core.errors import LLMUnavailable
from memory_core.service import Yuji


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "consolidate", help="run one consolidation batch now, or show what is pending"
    )
    parser.add_argument("--once", action="store_true", help="run at most one batch")
    parser.add_argument("--scope", type=scope_arg, help="only this chat, e.g. group:123456")
    parser.add_argument(
        "--force",
        action="store_true",
        help="ignore the token budget, the hourly cap and eligibility thresholds",
    )
    parser.add_argument(
        "--reconcile", action="store_true", help="start-up repair of batches and watermarks"
    )
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    async with opened_core() as core:
        return await execute(core, args)


async def execute(core: Yuji, args: argparse.Namespace) -> int:
    if args.reconcile:
        report = await core.consolidation.reconcile()
        print(f"reconcile: {len(report.failed)} open batch(es) failed")
        for fix in report.fixes:
            print(
                f"  {fix.scope}: delivered {fix.delivered[0]} -> {fix.delivered[1]}, "
                f"acked {fix.acked[0]} -> {fix.acked[1]}"
            )
    if not args.once:
        if not args.reconcile:
            print(await render_pending(core, args.scope))
        return 0
    try:
        report = await core.consolidation.run_once(scope=args.scope, force=args.force)
    except LLMUnavailable as exc:
        print(f"no batch: {exc}")
        return 2
    if report is None:
        if core.consolidation.blocked is not None:
            print(f"blocked: {core.consolidation.blocked}")
            return 3
        print(f"nothing to do: {core.consolidation.last_skip}")
        return 0
    print(render_report(report))
    return 0 if report.state == "done" else 1


def render_report(report: BatchReport) -> str:
    lines = [report.describe()]
    if report.written:
        lines.append(f"  memories written: {', '.join(str(i) for i in report.written)}")
    if report.changed:
        lines.append(f"  memories changed: {', '.join(str(i) for i in report.changed)}")
    if report.fragment_id is not None:
        lines.append(f"  fragment: {report.fragment_id}")
    refusals = [r for r in report.tool_results if r.startswith('{"ok": false')]
    lines += [f"  refused: {r}" for r in refusals[:10]]
    return "\n".join(lines)


async def render_pending(core: Yuji, scope: str | None) -> str:
    pendings = await core.consolidation.repo.pending(scope)
    if not pendings:
        return "no archived messages" + (f" in {scope}" if scope else "")
    lines: list[str] = []
    for p in pendings:
        status = await core.consolidation.status(p.scope)
        last = status.last_batch
        last_text = f"last batch {last.id} {last.state}" if last else "no batch yet"
        oldest = f", oldest since {p.oldest_at:%Y-%m-%d %H:%M}Z" if p.oldest_at else ""
        lines.append(
            f"{p.scope}: {p.count} pending{oldest}; delivered {status.cursor.delivered_id}, "
            f"acked {status.cursor.acked_id}; {last_text}"
        )
    return "\n".join(lines)
