"""What is due, on the follow-ups dev set: is the date logic exact?

    .venv/bin/python -m benchmarks.followups_dev [--data benchmarks/data/followups-dev.json]
        [--database URL] [--json]

A fresh store (SQLite in a temporary folder, or `--database`) replays the set's
timeline with a fake clock, in order of local time: each chat's messages archived as
they were sent, each memory written through the public write path (`core.memories`)
five minutes after its last evidence message, as consolidation would (its date the
one the model resolved), each change (more evidence, supersede, retract, forget) at
its time, and at each check's instant `core.followups.due()` over every chat is
compared with the gold (chat, person, memory). At the end, the plans whose date
disagrees with the words they cite (`refused`, read with memory_core/recall/when.py) are
compared with the gold's `refused`. Reported: checks matched exactly, precision and
recall of the due pairs over all checks, refusals found of those expected and any
other; every miss is listed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from memory_core import EvidenceRef, FakeClock, NewExperience, Settings, Yuji
from memory_core.vectors import FakeEmbedder

DATA = Path(__file__).parent / "data" / "followups-dev.json"
BOT_ID = "999"
WRITE_AFTER = timedelta(minutes=5)

Due = tuple[str, str, str]
"""(chat, person, memory key)"""


@dataclass
class Replay:
    core: Yuji
    zone: ZoneInfo
    messages: dict[str, int] = field(default_factory=dict[str, int])
    memories: dict[str, int] = field(default_factory=dict[str, int])
    scopes: dict[str, str] = field(default_factory=dict[str, str])
    """memory key -> chat"""


def local(text: str, zone: ZoneInfo) -> datetime:
    when = datetime.fromisoformat(text if " " in text else f"{text} 00:00")
    return when.replace(tzinfo=zone).astimezone(UTC)


def timeline(data: dict[str, Any], zone: ZoneInfo) -> list[tuple[datetime, int, str, Any]]:
    """Every step, in order of time; on a tie messages, then memories, changes, checks."""
    steps: list[tuple[datetime, int, str, Any]] = []
    for chat in data["chats"]:
        sent = {m["id"]: local(m["at"], zone) for m in chat["messages"]}
        for m in chat["messages"]:
            steps.append((sent[m["id"]], 0, "message", (chat, m)))
        for memory in chat["memories"]:
            at = max(sent[e] for e in memory["evidence"]) + WRITE_AFTER
            steps.append((at, 1, "memory", (chat, memory)))
        for change in chat["changes"]:
            steps.append((local(change["at"], zone), 2, "change", (chat, change)))
    for check in data["checks"]:
        steps.append((local(check["now"], zone), 3, "check", check))
    return sorted(steps, key=lambda s: (s[0], s[1]))


async def message(r: Replay, chat: dict[str, Any], m: dict[str, Any], at: datetime) -> None:
    bot = m["sender"] == "bot"
    sender = BOT_ID if bot else m["sender"]
    name = "大肥鱼" if bot else chat["names"][sender]
    r.messages[m["id"]] = await r.core.archive.append(
        NewExperience(
            scope=chat["scope"],
            fingerprint=m["id"],
            sender_id=sender,
            sender_name=name,
            text=m["text"],
            segments=[{"type": "text", "data": {"text": m["text"]}}],
            sent_at=at,
            is_bot=bot,
        )
    )


async def memory(r: Replay, chat: dict[str, Any], m: dict[str, Any], at: datetime) -> None:
    date = local(m["date"], r.zone) if "date" in m else None
    start = local(m["from"], r.zone) if "from" in m else at - WRITE_AFTER
    written = await r.core.memories.write(
        chat["scope"],
        type=m["type"],
        subject=chat["names"].get(m["subject_id"], m["subject_id"]),
        content=m["content"],
        evidence=[EvidenceRef(experience_id=r.messages[e]) for e in m["evidence"]],
        valid_from=date if m["type"] == "event" else start,
        valid_to=date if m["type"] == "state" else None,
        subject_id=m["subject_id"],
    )
    r.memories[m["key"]] = written.memory.id
    r.scopes[m["key"]] = chat["scope"]


async def change(r: Replay, chat: dict[str, Any], c: dict[str, Any]) -> None:
    scope, memories = chat["scope"], r.core.memories
    if c["op"] == "evidence":
        refs = [EvidenceRef(experience_id=r.messages[e]) for e in c["add"]]
        await memories.edit(
            scope, r.memories[c["memory"]], evidence=refs, reason="后续", changed_by="model"
        )
    elif c["op"] == "supersede":
        old, new = r.memories[c["old"]], r.memories[c["new"]]
        outcome = await memories.supersede(scope, old, new, reason="改期", changed_by="model")
        assert outcome.applied, outcome.detail
    elif c["op"] == "retract":
        await memories.retract(scope, r.memories[c["memory"]], reason="取消", changed_by="model")
    elif c["op"] == "forget":
        await memories.forget(scope, r.memories[c["memory"]], reason="/forget")
    else:
        raise ValueError(f"unknown change {c['op']!r}")


async def due_now(r: Replay) -> set[Due]:
    keys = {memory_id: key for key, memory_id in r.memories.items()}
    return {(f.memory.scope, f.person, keys[f.memory.id]) for f in await r.core.followups.due()}


async def run(data: dict[str, Any], settings: Settings) -> dict[str, Any]:
    zone = ZoneInfo(data["timezone"])
    steps = timeline(data, zone)
    clock = FakeClock(steps[0][0])
    core = await Yuji.open(settings, clock=clock, embedder=FakeEmbedder())
    r = Replay(core, zone)
    results: list[dict[str, Any]] = []
    try:
        for at, _, kind, step in steps:
            clock.set(at)
            if kind == "message":
                await message(r, step[0], step[1], at)
            elif kind == "memory":
                await memory(r, step[0], step[1], at)
            elif kind == "change":
                await change(r, step[0], step[1])
            else:
                gold = {(s, p, k) for s, p, k in step["due"]}
                got = await due_now(r)
                results.append({"now": step["now"], "gold": sorted(gold), "got": sorted(got)})
        keys = {memory_id: key for key, memory_id in r.memories.items()}
        refused = {
            (f.memory.scope, f.person, keys[f.memory.id])
            for f in await core.followups.listing()
            if f.state == "refused"
        }
    finally:
        await core.close()
    summary = report(results)
    gold_refused = {(s, p, k) for s, p, k in data.get("refused", [])}
    summary["refused_found"] = len(refused & gold_refused)
    summary["refused_expected"] = len(gold_refused)
    summary["refused_other"] = sorted(refused - gold_refused)
    return summary


def report(results: list[dict[str, Any]]) -> dict[str, Any]:
    hits = sum(len(set(map(tuple, c["gold"])) & set(map(tuple, c["got"]))) for c in results)
    gold = sum(len(c["gold"]) for c in results)
    got = sum(len(c["got"]) for c in results)
    exact = sum(set(map(tuple, c["gold"])) == set(map(tuple, c["got"])) for c in results)
    misses = [c for c in results if set(map(tuple, c["gold"])) != set(map(tuple, c["got"]))]
    return {
        "checks": len(results),
        "exact": exact,
        "due_pairs": gold,
        "precision": hits / got if got else 1.0,
        "recall": hits / gold if gold else 1.0,
        "misses": misses,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="what is due, on the follow-ups dev set")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--database", default="", help="an SQLAlchemy URL (default: SQLite)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = json.loads(args.data.read_text("utf-8"))
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(
            data_dir=Path(folder),
            database_url=args.database,
            timezone=data["timezone"],
            followup_window_days=data["window_days"],
        )
        result = asyncio.run(run(data, settings))
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return
    print(
        f"checks exact {result['exact']}/{result['checks']}; due pairs {result['due_pairs']}; "
        f"precision {result['precision']:.3f}, recall {result['recall']:.3f}; "
        f"date disagreements found {result['refused_found']}/{result['refused_expected']}, "
        f"others {len(result['refused_other'])}"
    )
    for other in result["refused_other"]:
        print(f"  refused, not expected: {other}")
    for miss in result["misses"]:
        print(f"  {miss['now']}: gold {miss['gold']} got {miss['got']}")


if __name__ == "__main__":
    main()
