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
The largest values include CPython's full garbage collections, which grow with the
benchmark's own 20,000 live messages (with `gc.disable()` the max CPU-busy stretch
of a 500-row commit is ~20 ms).
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


async def burst(core: Yuji, batch: list[NewExperience]) -> list[int]:
    """All at once, as a reconnecting client replays them: 500 new tasks per loop turn
    (like frames read off a socket), every one awaited."""
    tasks: list[asyncio.Task[int]] = []
    for start in range(0, len(batch), 500):
        tasks += [asyncio.create_task(core.archive.append(m)) for m in batch[start : start + 500]]
        await asyncio.sleep(0)
    return list(await asyncio.gather(*tasks))


class LoopProbe:
    """Sleeps 1 ms in a loop. `lags`: how late it woke (wall clock, includes the OS
    not scheduling us on a busy machine); `busy`: CPU the event-loop thread burned
    meanwhile, i.e. how long the loop was really kept busy by other callbacks."""

    def __init__(self, interval: float = 0.001) -> None:
        self.interval = interval
        self.lags: list[float] = []
        self.busy: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            start, cpu = time.perf_counter(), time.thread_time()
            await asyncio.sleep(self.interval)
            self.lags.append(time.perf_counter() - start - self.interval)
            self.busy.append(time.thread_time() - cpu)

    def __enter__(self) -> LoopProbe:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._task is not None:
            self._task.cancel()

    def summary(self) -> str:
        if not self.lags:
            return "no samples"
        return (
            f"loop wake-up lag {_quantiles(self.lags)}; loop CPU-busy between wake-ups "
            f"{_quantiles(self.busy)}"
        )


def _quantiles(values: list[float]) -> str:
    ordered = sorted(values)

    def ms(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    return f"p50 {ms(0.5):.2f} / p99 {ms(0.99):.2f} / max {ordered[-1] * 1000:.2f} ms"


async def main(n: int, rate: int, seconds: float) -> None:
    with tempfile.TemporaryDirectory(prefix="yuji-bench-") as tmp:
        core = await Yuji.open(Settings(data_dir=Path(tmp)))
        try:
            batch = [message(i) for i in range(n)]

            with LoopProbe() as probe:
                start = time.perf_counter()
                cpu, process_cpu = time.thread_time(), time.process_time()
                ids = await burst(core, batch)
                elapsed = time.perf_counter() - start
                cpu, process_cpu = time.thread_time() - cpu, time.process_time() - process_cpu
            assert len(set(ids)) == n
            print(
                f"burst:  {n} messages in {elapsed:.2f} s = {n / elapsed:,.0f} msg/s "
                f"({core.archive.writer.batches} transactions); CPU per message: event-loop "
                f"thread {cpu / n * 1e6:.0f} us, whole process {process_cpu / n * 1e6:.0f} us "
                f"(= {n / process_cpu:,.0f} msg/s per CPU-second); {probe.summary()}"
            )

            start = time.perf_counter()
            again = await burst(core, batch)
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
