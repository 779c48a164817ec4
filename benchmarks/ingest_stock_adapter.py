"""Ingest inside someone else's bot (the stock OneBot v11 adapter) against bot.py's own.

    .venv/bin/python -m benchmarks.ingest_stock_adapter [--messages 3000] [--rate 0]
        [--runs bare,host,bot] [--profile DIR] [--set YUJI_NAME=value ...] [--gc] [--clump 1]

`bare`: an nb-cli-shaped project (tests/e2e/host_project.py: nb-cli's bot.py, the
stock OneBot v11 adapter, a plugin of the host's own whose matcher sees every message)
without yuji: what stock NoneBot itself takes on this machine; `host`: the same
project with yuji installed, archiving on receive (the default); `host-preprocessor`:
the same with `YUJI_ARCHIVE_ON_RECEIVE=false` (archived in an event preprocessor);
`host-slots`: archiving on receive with at most 128 events in matchers
(`YUJI_HANDLER_SLOTS=128`); `bot`: this repository's `bot.py` with yuji's ingest
adapter (`YUJI_ONEBOT_ADAPTER=ingest`, the default); `bot-stock`: bot.py told to
register the stock adapter. Each run starts the bot on a fresh store (vectors and
model off), connects one NapCat-like client and sends `--messages` group messages over
five groups as fast as the socket takes them, or paced at `--rate` messages/s, each
message at its own time as a client sends them, or `--clump N` at a time (the sustained
case: e.g. `--rate 300 --messages 9000` is 30 s). `--set` adds a yuji setting to every
run's.

Reported per run: the seconds from the first send to the last row committed (the store
read every 20 ms), messages/s over that span, how many rows are missing (must be 0),
the delay from each message's send to its commit (median, 99th percentile, max), and
the same for the host's own matcher (the time it saw each message). `--profile DIR`
records each run's bot process with py-spy (`pip install py-spy`) from the first send
to the last commit, and prints where the time went (`benchmarks/profile_top.py`).
`--gc` counts the bot process's garbage collections in the same window, by generation,
with their seconds (`benchmarks/gc_trace/`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.profile_top import summarise
from tests.e2e.harness import DEFAULT_TOKEN, ROOT, BotProcess, count_rows, free_port
from tests.e2e.host_project import seen_ids, write_project

GROUPS = 5
POLL_S = 0.02
EXTRA: dict[str, str] = {}
"""`--set NAME=VALUE`: yuji settings added to every run's (e.g. YUJI_ARCHIVE_FLUSH_WAIT_S=0)."""
GC_TRACE: list[bool] = [False]
"""`--gc`: the bot process records its garbage collections (benchmarks/gc_trace/)."""
GENERATIONS = ("young", "middle", "full")
CLUMP = [1]
"""`--clump N`: paced messages go N at a time (the first version of this benchmark: 10)."""


@dataclass
class Result:
    kind: str
    archived: list[float]
    """Seconds from the first send to the commit of each message (by arrival order)."""
    seen: list[float]
    """Seconds from the first send to the host matcher seeing each message."""
    sent: list[float]
    cpu_s: float
    """The bot process's CPU seconds (all its threads) from the first send to the end."""
    collections: list[tuple[int, float]] | None = None
    """`--gc`: per generation, the collections in the same window and their seconds."""

    def line(self, messages: int) -> str:
        parts = [
            f"{self.kind:17} {messages} messages, CPU {self.cpu_s:.1f} s "
            f"= {1000 * self.cpu_s / messages:.2f} ms/message"
        ]
        for what, done in (("archived", self.archived), ("host matcher", self.seen)):
            if not done and what == "archived" and self.kind == "bare":
                continue
            if what == "host matcher" and not self.kind.startswith(("host", "bare")):
                continue
            missing = messages - len(done)
            end = done[-1] if done else float("nan")
            delays = sorted(d - s for d, s in zip(done, self.sent, strict=False))
            parts.append(
                f"{what}: {end:.2f} s = {len(done) / end:.0f} msg/s, {missing} missing, "
                f"delay p50 {_pct(delays, 0.5):.2f} / p99 {_pct(delays, 0.99):.2f} / "
                f"max {delays[-1] if delays else float('nan'):.2f} s"
            )
        if self.collections is not None:
            parts.append(
                "GC: "
                + ", ".join(
                    f"{name} {n} ({s:.2f} s)"
                    for name, (n, s) in zip(GENERATIONS, self.collections, strict=True)
                )
            )
        return "; ".join(parts)


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def _bot(kind: str, folder: Path) -> BotProcess:
    data = folder / "data"
    traced = (
        {
            "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent / "gc_trace"), str(ROOT)]),
            "YUJI_BENCH_GC_TRACE": str(folder / "gc.json"),
        }
        if GC_TRACE[0]
        else {}
    )
    settings = {"YUJI_VECTOR_MODE": "off", "YUJI_BACKFILL_INTERVAL_S": "0", **EXTRA}
    if kind == "host-preprocessor":
        settings["YUJI_ARCHIVE_ON_RECEIVE"] = "false"
    if kind == "host-slots":
        settings["YUJI_HANDLER_SLOTS"] = "128"
    if kind.startswith(("host", "bare")):
        port = free_port()
        project = write_project(
            folder / "project",
            {
                "DRIVER": "~fastapi",
                "HOST": "127.0.0.1",
                "PORT": str(port),
                "ONEBOT_ACCESS_TOKEN": DEFAULT_TOKEN,
                "COMMAND_START": '["/"]',
                **({} if kind == "bare" else {"YUJI_DATA_DIR": str(data), **settings}),
            },
            telegram=False,
            own_plugins=("ping",),
            yuji=kind != "bare",
        )
        return BotProcess(
            folder,
            cwd=project,
            port=port,
            env={"YUJI_DATA_DIR": str(data), **traced},
            python=os.environ.get("BENCH_PYTHON", sys.executable),
        )
    adapter = {"bot": "ingest", "bot-stock": "stock"}[kind]
    return BotProcess(folder, env={**settings, "YUJI_ONEBOT_ADAPTER": adapter, **traced})


async def run(kind: str, folder: Path, messages: int, rate: int, profile: Path | None) -> Result:
    bot = _bot(kind, folder)
    await bot.start()
    spy: subprocess.Popen[bytes] | None = None
    archives = kind != "bare"
    watches = kind.startswith(("host", "bare"))
    try:
        async with bot.peer() as peer:
            await asyncio.sleep(1.0)  # the start-up's first jobs
            if profile is not None:
                spy = _spy(bot.pid, profile / f"{kind}.txt")
            cpu = _cpu_s(bot.pid)
            start = time.monotonic()
            sent: list[float] = []
            archived: list[float] = []
            seen: list[float] = []

            def poll() -> None:
                now = time.monotonic() - start
                if archives:
                    archived.extend(
                        [now] * (count_rows(bot.data_dir, "experiences") - len(archived))
                    )
                if watches:
                    seen.extend([now] * (len(seen_ids(bot.cwd)) - len(seen)))

            async def watch() -> None:
                while True:
                    poll()
                    await asyncio.sleep(POLL_S)

            watcher = asyncio.create_task(watch())
            for i in range(messages):
                if rate and i % CLUMP[0] == 0:  # paced: each clump at its own time
                    await asyncio.sleep(max(0.0, start + i / rate - time.monotonic()))
                sent.append(time.monotonic() - start)
                await peer.send_event(
                    peer.group_message(
                        f"第{i}条消息，随便聊聊今天的天气",
                        group_id=710_000 + i % GROUPS,
                        message_id=1_000_000 + i,
                        user_id=30_000 + i % 37,
                    )
                )
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline and (
                (archives and len(archived) < messages) or (watches and len(seen) < messages)
            ):
                await asyncio.sleep(POLL_S)
                if spy is not None and len(archived if archives else seen) >= messages:
                    spy = _stop_spy(spy)  # `bare` archives nothing: until its matcher saw all
            watcher.cancel()
            poll()
            cpu = _cpu_s(bot.pid) - cpu
            window = (start, time.monotonic())
    finally:
        if spy is not None:
            _stop_spy(spy)
        await bot.stop()
    collections = _collections(folder / "gc.json", window) if GC_TRACE[0] else None
    return Result(kind, archived[:messages], seen[:messages], sent, cpu, collections)


def _collections(trace: Path, window: tuple[float, float]) -> list[tuple[int, float]] | None:
    """Per generation, the collections `trace` recorded within `window` and their seconds."""
    if not trace.exists():
        return None  # the bot did not exit normally
    found = [(0, 0.0) for _ in GENERATIONS]
    for at, generation, seconds in json.loads(trace.read_text("utf-8")):
        if window[0] <= at <= window[1]:
            n, total = found[generation]
            found[generation] = (n + 1, total + seconds)
    return found


def _cpu_s(pid: int | None) -> float:
    """User + system CPU seconds of process `pid` so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _spy(pid: int | None, out: Path) -> subprocess.Popen[bytes]:
    out.parent.mkdir(parents=True, exist_ok=True)
    spy = ("py-spy", "record", "--nonblocking", "-r", "200", "-f", "raw", "-o", str(out))
    return subprocess.Popen(
        [*spy, "-p", str(pid)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _stop_spy(spy: subprocess.Popen[bytes]) -> None:
    spy.send_signal(2)
    spy.wait(60)


async def main(messages: int, runs: list[str], rate: int, profile: Path | None) -> None:
    load = os.getloadavg()[0]
    pace = (
        "burst"
        if not rate
        else f"{rate} msg/s" + (f", {CLUMP[0]} at a time" if CLUMP[0] > 1 else "")
    )
    print(f"{messages} messages, {pace}; load {load:.1f}")
    for kind in runs:
        with tempfile.TemporaryDirectory(prefix="yuji-stock-") as tmp:
            result = await run(kind, Path(tmp), messages, rate, profile)
        print(result.line(messages), flush=True)
        if profile is not None:
            print(summarise(profile / f"{kind}.txt"), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--runs", default="bare,host,bot")
    parser.add_argument("--rate", type=int, default=0, help="messages/s; 0: one burst")
    parser.add_argument("--profile", type=Path, default=None, help="py-spy output folder")
    parser.add_argument("--set", action="append", default=[], help="YUJI_NAME=value, for yuji")
    parser.add_argument("--gc", action="store_true", help="count the bot's garbage collections")
    parser.add_argument("--clump", type=int, default=1, help="paced messages sent together")
    args = parser.parse_args()
    GC_TRACE[0] = args.gc
    CLUMP[0] = max(1, args.clump)
    EXTRA.update(item.split("=", 1) for item in args.set)
    asyncio.run(main(args.messages, args.runs.split(","), args.rate, args.profile))
