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
from memory_core.nightly.status import format_when, report_lines
from memory_core.service import Yuji


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "nightly", help="run the nightly pipeline (settle, diary, cards, states, events, gc) now"
    )
    parser.add_argument("--day", help="only this day, YYYY-MM-DD (in YUJI_TIMEZONE)")
    parser.add_argument("--scope", type=scope_arg, help="only this chat, e.g. group:123456")
    parser.add_argument(
        "--status", action="store_true", help="show the last night per chat, run nothing"
    )
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    async with opened_core() as core:
        return await execute(core, args)


async def execute(core: Yuji, args: argparse.Namespace) -> int:
    if args.status:
        for scope in [args.scope] if args.scope else await core.nightly.scopes():
            last = await core.nightly.last_run(scope)
            steps = " ".join(f"{s.step}={s.state}" for s in last.steps) or "never ran"
            health = (
                "circuit OPEN" if last.circuit_open else f"failures {last.consecutive_failures}"
            )
            print(
                f"{scope} {last.day or '-'} {steps} ({health}; "
                f"last success {format_when(last.last_success_at, core.nightly.tz)})"
            )
        return 0
    if core.models.nightly is None:
        print(
            "note: no model configured (YUJI_LLM_* or YUJI_NIGHTLY_LLM_*); steps with material wait"
        )
    try:
        reports = await core.nightly.run(day=args.day, scope=args.scope)
    except (ValidationError, ValueError) as exc:
        print(f"refused: {exc}")
        return 1
    for line in report_lines(reports):
        print(line)
    if not reports:
        print("nothing to do: no chats yet")
    outcomes = {r.outcome for r in reports}
    if "failed" in outcomes:
        return 1
    if "waiting" in outcomes:
        return 2
    return 3 if "blocked" in outcomes else 0
