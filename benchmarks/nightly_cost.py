"""What the nightly pipeline costs, with an instant scripted model (so only yuji's own
work is measured).

    .venv/bin/python benchmarks/nightly_cost.py [--chats 20] [--fragments 8] [--memories 500]

On a fresh database in a temporary folder:

1. night: `--chats` chats, each with `--fragments` fragments on one day and
   `--memories` idle memories (half of them go cold), one full night for all chats:
   wall time per chat and in total;
2. blocks: `core.nightly.blocks()` (what every chat reply reads) after a few nights,
   with five recalled memories from an older day: latency p50/p95 over 500 calls.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory_core import FakeClock, Settings, Yuji
from memory_core.llm.fake import ScriptedLLM
from memory_core.types import EvidenceRef, Recalled
from tests.core.nightly.seed import archive, fragment, quiet_responder, sh


async def seed_memories(core: Yuji, scope: str, n: int, at: datetime) -> list[Any]:
    [exp] = await archive(core, scope, at, ["很久以前"])
    items: list[Any] = []
    for i in range(n):
        outcome = await core.memories.write(
            scope,
            type="fact",
            subject=f"群友{i % 50}",
            content=f"群友{i % 50}第{i}件小事：喜欢第{i}号口味的鱼",
            evidence=[EvidenceRef(experience_id=exp)],
            importance=0.3 if i % 2 else 0.95,
        )
        items.append(outcome.memory)
    return items


async def main(chats: int, fragments: int, memories: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        clock = FakeClock(sh(2026, 5, 1, 12, 0))
        llm = ScriptedLLM(default=quiet_responder)
        core = await Yuji.open(Settings(data_dir=Path(tmp) / "data"), clock=clock, llm=llm)
        try:
            scopes = [f"group:{1000 + c}" for c in range(chats)]
            old: list[Any] = []
            for scope in scopes:
                old = await seed_memories(core, scope, memories, clock.now())
                for f in range(fragments):
                    await fragment(core, scope, sh(2026, 11, 20, 9 + f, 0), f"第{f}段：聊了鱼。")
            clock.set(sh(2026, 11, 21, 4, 0))
            start = time.perf_counter()
            reports = await core.nightly.run()
            night = time.perf_counter() - start
            cold = sum(
                1 for m in await core.memories.newest(scopes[-1], status="cold", limit=10**6)
            )
            print(
                f"night: {chats} chats x ({fragments} fragments, {memories} memories): "
                f"{night:.2f} s total, {1000 * night / chats:.1f} ms per chat, "
                f"{len(reports)} step reports, {len(llm.requests)} model asks, "
                f"{cold} memories cold in the last chat"
            )
            scope = scopes[-1]
            for day in (21, 22, 23, 24):
                await fragment(core, scope, sh(2026, 11, day, 21, 0), f"{day}日")
                clock.set(sh(2026, 11, day + 1, 4, 0))
                await core.nightly.run(scope=scope)
            recalled = [Recalled(m, "lexical", 1.0, "") for m in old[:5]]
            samples: list[float] = []
            for _ in range(500):
                t0 = time.perf_counter()
                await core.nightly.blocks(scope, clock.now(), recalled)
                samples.append((time.perf_counter() - t0) * 1000)
            samples.sort()
            print(
                f"blocks: p50 {statistics.median(samples):.2f} ms, "
                f"p95 {samples[int(len(samples) * 0.95)]:.2f} ms (5 recalled, 3 diaries, cards)"
            )
        finally:
            await core.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--chats", type=int, default=20)
    parser.add_argument("--fragments", type=int, default=8)
    parser.add_argument("--memories", type=int, default=500)
    args = parser.parse_args()
    asyncio.run(main(args.chats, args.fragments, args.memories))
