"""Archive throughput and event-loop cost, through the core API with group commit.

    .venv/bin/python benchmarks/archive_throughput.py [--messages 20000] [--rate 2000]

Three measurements on a fresh database in a temporary folder:

1. burst: N concurrent `core.archive.append` calls (every one awaited), messages/s,
   and the CPU time the event-loop thread spent per message (SQLite itself runs in
   aiosqlite's thread);
2. replay: the same N again (all duplicates, the reconnect case), messages/s;
3. paced: messages arriving at `--rate` per second for a few seconds, as a busy bot
   sees them: per-message append latency (submit -> committed) p50/p99.

During 1 and 3 a probe task sleeps 1 ms in a loop and records how late it wakes up:
that lateness is the latency the archive adds to everything else on the event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from memory_core import NewExperience, Settings, Yuji


def message(i: int) -> NewExperience:
    text = f"第{i}条消息：今天的鱼很好吃，明天去爬山吗？" * 2
    return NewExperience(
        scope=f"group:{100 + i % 20}",
        fingerprint=str(1_000_000 + i),
        sender_id=str(10_000 + i % 300),
        sender_name=f"群友{i % 300}",
        text=text,
        segments=[{"type": "text", "data": {"text": text}}],
        sent_at=datetime.now(UTC),
    )


class LoopProbe:
    def __init__(self, interval: float = 0.001) -> None:
        self.interval = interval
        self.lags: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(self.interval)
            self.lags.append(time.perf_counter() - start - self.interval)

    def __enter__(self) -> LoopProbe:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._task is not None:
            self._task.cancel()

    def summary(self) -> str:
        if not self.lags:
            return "no samples"
        lags = sorted(self.lags)

        def ms(q: float) -> float:
            return lags[min(len(lags) - 1, int(q * len(lags)))] * 1000

        return f"loop lag p50 {ms(0.5):.2f} ms, p99 {ms(0.99):.2f} ms, max {lags[-1] * 1000:.2f} ms"


async def main(n: int, rate: int, seconds: float) -> None:
    with tempfile.TemporaryDirectory(prefix="yuji-bench-") as tmp:
        core = await Yuji.open(Settings(data_dir=Path(tmp)))
        try:
            batch = [message(i) for i in range(n)]

            with LoopProbe() as probe:
                start, cpu = time.perf_counter(), time.thread_time()
                ids = await asyncio.gather(*(core.archive.append(m) for m in batch))
                elapsed, cpu = time.perf_counter() - start, time.thread_time() - cpu
            assert len(set(ids)) == n
            print(
                f"burst:  {n} messages in {elapsed:.2f} s = {n / elapsed:,.0f} msg/s "
                f"({core.archive.writer.batches} transactions); event-loop thread CPU "
                f"{cpu / n * 1e6:.0f} us/message; {probe.summary()}"
            )

            start = time.perf_counter()
            again = await asyncio.gather(*(core.archive.append(m) for m in batch))
            elapsed = time.perf_counter() - start
            assert again == ids
            print(f"replay: {n} duplicates in {elapsed:.2f} s = {n / elapsed:,.0f} msg/s")

            latencies: list[float] = []

            async def one(i: int) -> None:
                t0 = time.perf_counter()
                await core.archive.append(message(n + i))
                latencies.append(time.perf_counter() - t0)

            total = int(rate * seconds)
            tasks: list[asyncio.Task[None]] = []
            with LoopProbe() as probe:
                start = time.perf_counter()
                for i in range(total):
                    delay = start + i / rate - time.perf_counter()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    tasks.append(asyncio.create_task(one(i)))
                await asyncio.gather(*tasks)
            latencies.sort()
            print(
                f"paced:  {total} messages at {rate}/s: append latency p50 "
                f"{statistics.median(latencies) * 1000:.2f} ms, p99 "
                f"{latencies[int(0.99 * len(latencies))] * 1000:.2f} ms; {probe.summary()}"
            )
        finally:
            await core.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="archive throughput benchmark")
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--rate", type=int, default=2_000)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    asyncio.run(main(args.messages, args.rate, args.seconds))
