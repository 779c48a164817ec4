"""Web console render times with 100k messages and 10k memories in one chat, and the
event loop meanwhile.

    .venv/bin/python benchmarks/console_render.py [--messages 100000] [--memories 10000]
        [--rounds 40]

A fresh temporary database is filled through the public write paths (the archive
writer, `core.memories.write_many`, the consolidation and nightly repositories'
state machines for 2,000 acknowledged batches and 60 nights of steps); the console is mounted on a FastAPI app exactly as
the plugin mounts it and asked in-process (httpx ASGI transport, Bearer token), so
the times are server-side: routing, auth, the core's queries, Jinja2 rendering. Per
page: p50 / p95 / max. A 1 ms probe task on the same loop measures how late it wakes
while pages render (wake-up lag) and how much CPU the loop thread burned between its
wake-ups (a long synchronous step would show as a large max), and the cyclic
collector's longest pause. Like bot.py, the run freezes the heap once started
(`gc.freeze()`, after the fill: a little kinder than a bot whose caches grew later);
`--no-freeze` shows the full collections without it. Target: p95 <= 150 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import nonebot
from fastapi import FastAPI

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from archive_throughput import LoopProbe

from memory_core import FakeClock, NewExperience, Settings, Yuji
from memory_core.eval.generate import distractors
from memory_core.eval.metrics import percentile
from memory_core.storage.consolidation.consolidation_repo import Cut
from memory_core.storage.schema import NIGHTLY_STEPS
from memory_core.types import EvidenceRef

SCOPE = "group:1"
TOKEN = "bench-token"
MEMBERS = ["小明", "阿杰", "老周", "胖虎", "小鹿", "大刘", "糖糖", "阿May"]
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
BATCHES = 2000
NIGHTS = 60


async def fill(core: Yuji, messages: int, memories: int) -> None:
    step = timedelta(days=60) / max(messages, 1)
    first = NOW - timedelta(days=60)
    for start in range(0, messages, 5000):
        await core.archive.append_many(
            [
                NewExperience(
                    scope=SCOPE,
                    fingerprint=str(i),
                    sender_id=str(10000 + i % 40),
                    sender_name=MEMBERS[i % len(MEMBERS)],
                    text=f"第{i}条消息：今天{MEMBERS[i % len(MEMBERS)]}说了点什么",
                    sent_at=first + step * i,
                )
                for i in range(start, min(start + 5000, messages))
            ]
        )
    await core.archive.flush()
    evidence = (EvidenceRef(experience_id=1),)
    items = [
        g.to_write(evidence) for g in distractors(memories, members=MEMBERS, chinese=True, seed=7)
    ]
    for start in range(0, len(items), 5000):
        await core.memories.write_many(SCOPE, items[start : start + 5000], changed_by="bench")
    await fill_work(core, messages)


async def fill_work(core: Yuji, messages: int) -> None:
    """Acknowledged consolidation batches over the archive, and NIGHTS nights of steps (every
    fifth night with a failed step)."""
    repo = core.consolidation.repo
    size = max(messages // BATCHES, 1)
    for i in range(min(BATCHES, messages)):
        first = i * size + 1
        cut = Cut(first_id=first, last_id=first + size - 1, count=size, chars=size * 20)
        batch = await repo.create(SCOPE, cut, f"t{i}", NOW)
        assert batch is not None
        await repo.delivered(batch.id, NOW)
        await repo.processing(batch.id, NOW)
        await repo.count_tools(batch.id, 6, i % 3)
        await repo.acknowledge(batch.id, batch.token, "nothing", "", NOW)
    nightly = core.nightly.repo
    for n in range(NIGHTS):
        day = f"{(NOW - timedelta(days=n + 1)).date():%Y-%m-%d}"
        for step in NIGHTLY_STEPS:
            await nightly.begin_step(SCOPE, day, step, NOW, "bench")
            if n % 5 == 0 and step == "cards":
                await nightly.fail_step(SCOPE, day, step, NOW, "bench: model timed out")
            else:
                await nightly.finish_step(SCOPE, day, step, NOW, {})


def app_for(core: Yuji) -> FastAPI:
    nonebot.init(driver="~fastapi")
    from nonebot_plugin_yuji import console, runtime

    runtime.set_core(core)
    app = FastAPI()
    console.mount(app)
    return app


class GcPauses:
    """The collector's pauses while the block runs (they stop the event loop like any
    synchronous step, so the loop probe's longest busy stretch includes them)."""

    def __init__(self) -> None:
        self.pauses: list[tuple[float, int]] = []
        self._started = 0.0

    def _hook(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses.append(((time.perf_counter() - self._started) * 1000, info["generation"]))

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self._hook)
        return self

    def __exit__(self, *_exc: object) -> None:
        gc.callbacks.remove(self._hook)

    def longest(self) -> str:
        if not self.pauses:
            return "none"
        ms, generation = max(self.pauses)
        return f"{ms:5.1f} ms (gen {generation})"


async def timed(
    client: httpx.AsyncClient, path: str, rounds: int, before: Callable[[], None] = lambda: None
) -> list[float]:
    out: list[float] = []
    for _ in range(rounds):
        before()
        started = time.perf_counter()
        response = await client.get(path, headers={"Authorization": f"Bearer {TOKEN}"})
        out.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (path, response.status_code)
    return out


async def main(messages: int, memories: int, rounds: int, *, freeze: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="yuji-bench-") as tmp:
        settings = Settings(data_dir=Path(tmp), console_token=TOKEN)
        core = await Yuji.open(settings, clock=FakeClock(NOW))
        try:
            started = time.perf_counter()
            await fill(core, messages, memories)
            print(
                f"filled {messages} messages + {memories} memories in one chat "
                f"in {time.perf_counter() - started:.1f} s"
            )
            app = app_for(core)
            if freeze:  # as bot.py does once started (core open, before any page)
                gc.collect()
                gc.freeze()
            transport = httpx.ASGITransport(app=app)
            cold = core.console.expire_activity
            day = f"{(NOW - timedelta(days=30)).date():%Y-%m-%d}"
            pages = {
                "overview, counts+chart cached": "/yuji/",
                "overview, cold (every 60 s)": "/yuji/",
                "chat /yuji/chats/{scope}": f"/yuji/chats/{SCOPE}",
                "chat, filtered (type=event)": f"/yuji/chats/{SCOPE}?type=event&status=active",
                "recall search (htmx part)": f"/yuji/chats/{SCOPE}/search?q=小明最近在忙什么",
                "memory page": f"/yuji/chats/{SCOPE}/memories/{memories // 2}",
                "archive, one day": f"/yuji/chats/{SCOPE}/archive?day={day}",
                "archive, search, 1 hit": f"/yuji/chats/{SCOPE}/archive?q=第98765条",
                "archive, search, 500 hits": f"/yuji/chats/{SCOPE}/archive?q=小明",
                "archive, search, no hit": f"/yuji/chats/{SCOPE}/archive?q=没有这句话",
                "consolidation and nightly": f"/yuji/chats/{SCOPE}/work",
            }
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
                for path in pages.values():  # warm caches and imports
                    await timed(client, path, 2)
                for name, path in pages.items():
                    with LoopProbe() as probe, GcPauses() as collector:
                        times = await timed(
                            client, path, rounds, cold if "cold" in name else lambda: None
                        )
                        await asyncio.sleep(0.01)
                    busy = max(probe.busy, default=0.0) * 1000
                    lag = max(probe.lags, default=0.0) * 1000
                    print(
                        f"{name:30s} p50 {percentile(times, 50):6.1f}  "
                        f"p95 {percentile(times, 95):6.1f}  max {max(times):6.1f} ms | "
                        f"loop: longest busy stretch {busy:5.1f} ms, worst wake-up lag {lag:6.1f} ms"
                        f" | longest GC pause {collector.longest()}"
                    )
        finally:
            await core.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument(
        "--no-freeze",
        action="store_true",
        help="skip gc.freeze() after start-up (bot.py freezes; this shows the collector's pauses without it)",
    )
    args = parser.parse_args()
    asyncio.run(main(args.messages, args.memories, args.rounds, freeze=not args.no_freeze))
