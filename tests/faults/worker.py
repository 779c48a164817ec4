"""One workload of the kill suite, run as its own process until it is SIGKILLed.

    python -m tests.faults.worker archive|consolidation|nightly|backup SEED

Settings come from the environment (`YUJI_DATA_DIR`, `YUJI_LLM_*`), as for the CLI.
It prints READY once the core is open, so the harness kills it inside the workload,
not during imports. Every message it archives is a pure function of its index
(`message(i)`), so a later worker starting lower resends what is already there.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import sys
from datetime import UTC, datetime, timedelta

from memory_core import Yuji
from memory_core.cli.common import load_settings
from memory_core.types import NewExperience

BASE = datetime(2026, 11, 1, tzinfo=UTC)
WORKLOADS = ("archive", "consolidation", "nightly", "backup")


def message(i: int, scope: str | None = None) -> NewExperience:
    return NewExperience(
        scope=scope or f"group:{i % 3 + 1}",
        fingerprint=f"f{i}",
        sender_id=str(100 + i % 5),
        sender_name=f"成员{i % 5}",
        text=f"第{i}条：今天的鱼塘水有点凉",
        sent_at=BASE + timedelta(seconds=i),
    )


async def _archive_forever(core: Yuji, rng: random.Random, start: int) -> None:
    i = start
    while True:
        n = rng.randint(1, 60)
        await core.archive.append_many([message(j) for j in range(i, i + n)])
        i += n


async def _consolidate_forever(core: Yuji, rng: random.Random, start: int) -> None:
    i = start
    while True:
        n = rng.randint(5, 30)
        await core.archive.append_many([message(j, "group:9") for j in range(i, i + n)])
        i += n
        await core.consolidation.run_once(force=True)


async def _nightly_forever(core: Yuji, rng: random.Random, start: int) -> None:
    while True:
        await core.nightly.run(trigger="manual")
        await _archive_some(core, rng, start)


async def _archive_some(core: Yuji, rng: random.Random, start: int) -> None:
    i = start + rng.randint(0, 10_000)
    await core.archive.append_many([message(j) for j in range(i, i + 20)])


async def _backup_forever(core: Yuji, rng: random.Random, start: int) -> None:
    writer = asyncio.create_task(_archive_forever(core, rng, start))
    try:
        while True:
            await core.ops.backup(reason="fault")
    finally:
        writer.cancel()


async def main(workload: str, seed: int) -> None:
    rng = random.Random(seed)
    core = await Yuji.open(load_settings())
    with sqlite3.connect(core.settings.database_path) as conn:
        (archived,) = conn.execute("SELECT count(*) FROM experiences").fetchone()
    # Start a little below what is archived: the first messages are resends.
    start = archived + 1000 if workload == "consolidation" else max(0, archived - 100)
    print("READY", flush=True)
    run = {
        "archive": _archive_forever,
        "consolidation": _consolidate_forever,
        "nightly": _nightly_forever,
        "backup": _backup_forever,
    }[workload]
    await run(core, rng, start)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
