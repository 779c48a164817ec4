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
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "forget-person", help="forget one person in one chat (memories, messages, images)"
    )
    parser.add_argument("--scope", type=scope_arg, required=True, help="group:ID or private:ID")
    parser.add_argument("--user", required=True, help="the person's QQ number")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    user = str(args.user).strip()
    if not user.isdigit():
        raise ValueError(f"--user must be a QQ number, got {args.user!r}")
    async with opened_core() as core:
        report = await core.porting.forget_person(args.scope, user, requested_by="cli")
    print(json.dumps(report.to_json(), ensure_ascii=False) if args.json else render(report))
    return 0


def render(report: ForgetReport) -> str:
    lines = [
        f"forgot {report.user_id} in {report.scope} (request #{report.request_id}):",
        f"  names matched: {', '.join(report.names)}",
        f"  memories retracted: {report.memories_retracted} "
        f"(of {len(report.memory_ids)} about them or resting only on their messages)",
        f"  messages tombstoned: {report.messages_redacted} this run, "
        f"{report.messages_total} in all",
        f"  image files deleted: {report.files_deleted}",
        f"  summaries rewritten: {report.summaries_rewritten}, cards rewritten: "
        f"{report.cards_rewritten}",
        "  full-text index: their memories removed; vectors: dropped at the next `yuji embed`",
    ]
    if report.backups:
        lines.append(f"  {len(report.backups)} backup(s) still hold the old data until retention")
        lines.append("  removes them, or `yuji backup --redact` rewrites them now:")
        lines += [f"    {path}" for path in report.backups]
    return "\n".join(lines)
