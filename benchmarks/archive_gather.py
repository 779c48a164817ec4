"""The archive writer alone, fed as the live ingest feeds it: one message at a time.

    .venv/bin/python -m benchmarks.archive_gather [--rate 300] [--seconds 10] [--waits 0,0.05]

For each `YUJI_ARCHIVE_FLUSH_WAIT_S` in `--waits`, a fresh store takes `--rate`
messages a second, each queued on its own as the receive hook queues it
(`core.archive.offer`, nobody awaiting it), and the run reports how many transactions
committed them and the CPU per message: the event-loop thread's, and the whole
process's (SQLite itself runs in aiosqlite's thread). Without the wait every message
arriving alone is a transaction of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from benchmarks.archive_throughput import message
from memory_core import Settings, Yuji


async def run(rate: int, seconds: float, wait_s: float) -> str:
    with tempfile.TemporaryDirectory(prefix="yuji-gather-") as tmp:
        settings = Settings(data_dir=Path(tmp), vector_mode="off", archive_flush_wait_s=wait_s)
        core = await Yuji.open(settings)
        try:
            total = int(rate * seconds)
            batch = [message(i) for i in range(total)]
            committed: list[asyncio.Future[object]] = []
            cpu, process_cpu = time.thread_time(), time.process_time()
            start = time.perf_counter()
            for i, exp in enumerate(batch):
                await asyncio.sleep(max(0.0, start + i / rate - time.perf_counter()))
                future = core.archive.offer(exp)
                assert future is not None
                committed.append(future)
            await asyncio.gather(*committed)
            cpu, process_cpu = time.thread_time() - cpu, time.process_time() - process_cpu
            return (
                f"wait {wait_s:g} s: {total} messages at {rate}/s in "
                f"{core.archive.writer.batches} transactions; CPU per message: event-loop "
                f"thread {cpu / total * 1e3:.2f} ms, whole process {process_cpu / total * 1e3:.2f} ms"
            )
        finally:
            await core.close()


async def main(rate: int, seconds: float, waits: list[float]) -> None:
    for wait_s in waits:
        print(await run(rate, seconds, wait_s), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--waits", default="0,0.05", help="YUJI_ARCHIVE_FLUSH_WAIT_S values")
    args = parser.parse_args()
    asyncio.run(main(args.rate, args.seconds, [float(w) for w in args.waits.split(",")]))
