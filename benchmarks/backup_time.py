"""How long a verified backup takes, and how much it disturbs the event loop.

    .venv/bin/python benchmarks/backup_time.py [--rows 100000]

Builds a database of `--rows` experiences (messages of ~40 characters with their
segments JSON) plus one memory per 10 messages, then runs `core.ops.backup()`
(snapshot, SHA-256, integrity_check, row counts, restore drill) three times and
prints the file size, the wall time of each run, the time of each phase, and how late
a 1 ms ticker on the event loop woke up meanwhile (the backup runs in a thread).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import insert

from memory_core import RecordingAlertSink, Settings, Yuji
from memory_core.ops.backup import restore_drill
from memory_core.ops.capacity import human_bytes
from memory_core.ops.manifest import sha256_file
from memory_core.storage.engine import Database
from memory_core.storage.ops import ops_repo
from memory_core.storage.schema import TRUTH_TABLES, experiences, memories

WHEN = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
CHUNK = 5000


async def fill(db: Database, rows: int) -> None:
    """`rows` messages in seven chats and a memory for every tenth, straight into the
    tables (benchmarks/copy_store.py fills its source the same way)."""
    for start in range(0, rows, CHUNK):
        n = min(CHUNK, rows - start)
        batch = [
            {
                "scope": f"group:{(start + i) % 7}",
                "fingerprint": f"m{start + i}",
                "sender_id": str(10000 + (start + i) % 50),
                "sender_name": "群友",
                "text": f"第 {start + i} 条：今天中午吃了火锅，晚上去看电影吧 🎬",
                "segments": [{"type": "text", "data": {"text": f"第 {start + i} 条"}}],
                "sent_at": WHEN,
                "received_at": WHEN,
                "source": "realtime",
            }
            for i in range(n)
        ]
        mems = [
            {
                "scope": f"group:{(start + i) % 7}",
                "type": "fact",
                "subject": "阿明",
                "content": f"阿明喜欢第 {start + i} 号火锅店",
                "created_at": WHEN,
                "updated_at": WHEN,
            }
            for i in range(0, n, 10)
        ]
        async with db.write() as conn:
            await conn.execute(insert(experiences), batch)
            await conn.execute(insert(memories), mems)


async def ticker(lateness: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        before = time.perf_counter()
        await asyncio.sleep(0.001)
        lateness.append(time.perf_counter() - before - 0.001)


def phases(path: Path, counts: dict[str, int], sha: str) -> dict[str, float]:
    timings: dict[str, float] = {}
    t = time.perf_counter()
    sha256_file(path)
    timings["sha256"] = time.perf_counter() - t
    t = time.perf_counter()
    ops_repo.integrity_problems(path)
    timings["integrity_check"] = time.perf_counter() - t
    t = time.perf_counter()
    ops_repo.count_rows(path, TRUTH_TABLES)
    timings["counts"] = time.perf_counter() - t
    t = time.perf_counter()
    restore_drill(path, expected=counts, sha256=sha)
    timings["drill"] = time.perf_counter() - t
    return timings


async def main(rows: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        core = await Yuji.open(Settings(data_dir=Path(tmp)), alert_sink=RecordingAlertSink())
        try:
            t = time.perf_counter()
            await fill(core.db, rows)
            print(
                f"filled {rows} experiences + {rows // 10} memories in {time.perf_counter() - t:.1f}s"
            )
            for run in range(3):
                lateness: list[float] = []
                stop = asyncio.Event()
                probe = asyncio.create_task(ticker(lateness, stop))
                t = time.perf_counter()
                manifest = await core.ops.backup(reason="bench")
                wall = time.perf_counter() - t
                stop.set()
                await probe
                assert manifest.ok, manifest.failed_checks
                late = sorted(lateness)
                p99 = late[int(len(late) * 0.99)] if late else 0.0
                print(
                    f"run {run + 1}: {wall:.2f}s for {human_bytes(manifest.size_bytes)} "
                    f"(live {human_bytes(manifest.live_bytes)}); event-loop lateness "
                    f"median {statistics.median(late) * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms, "
                    f"max {max(late) * 1000:.1f} ms"
                )
            path = core.settings.backups_dir / manifest.file
            for name, seconds in phases(path, manifest.backup_counts, manifest.sha256).items():
                print(f"  {name}: {seconds:.2f}s")
            t = time.perf_counter()
            ops_repo.online_backup(core.settings.database_path, Path(tmp) / "raw.db", TRUTH_TABLES)
            print(f"  snapshot alone (online backup + counts): {time.perf_counter() - t:.2f}s")
        finally:
            await core.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    asyncio.run(main(parser.parse_args().rows))
