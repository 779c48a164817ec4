"""Ingest inside someone else's bot (the stock OneBot v11 adapter) against bot.py's own.

    .venv/bin/python -m benchmarks.ingest_stock_adapter [--messages 3000] [--rate 0]
        [--runs host,host-preprocessor,bot,bot-stock]

`host`: an nb-cli-shaped project (tests/e2e/host_project.py: nb-cli's bot.py, the
stock OneBot v11 adapter, yuji and a plugin of the host's own whose matcher sees
every message) with its settings in `.env`, archiving on receive (the default);
`host-preprocessor`: the same with `YUJI_ARCHIVE_ON_RECEIVE=false` (archived in an
event preprocessor, as before); `host-unbounded`: archiving on receive with no bound on
the events in matchers (`YUJI_HANDLER_SLOTS=0`); `bot`: this repository's `bot.py` with
yuji's ingest adapter (`YUJI_ONEBOT_ADAPTER=ingest`, the default); `bot-stock`:
bot.py told to register the stock adapter. Each run starts the bot on a fresh store
(vectors and model off), connects one NapCat-like client and sends `--messages`
group messages over five groups as fast as the socket takes them (or paced at
`--rate` messages/s: the sustained case); reported: the
seconds from the first send to the last row committed (read from the store every
20 ms), messages/s over that span, how many rows are missing (must be 0), and for a
host when its own matcher had seen every message.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from tests.e2e.harness import DEFAULT_TOKEN, BotProcess, count_rows, free_port
from tests.e2e.host_project import seen_ids, write_project

GROUPS = 5


async def run(kind: str, folder: Path, messages: int, rate: int) -> tuple[float, int, int]:
    data = folder / "data"
    settings = {"YUJI_VECTOR_MODE": "off", "YUJI_BACKFILL_INTERVAL_S": "0"}
    if kind.startswith("host"):
        if kind == "host-preprocessor":
            settings["YUJI_ARCHIVE_ON_RECEIVE"] = "false"
        if kind == "host-unbounded":
            settings["YUJI_HANDLER_SLOTS"] = "0"
        port = free_port()
        project = write_project(
            folder / "project",
            {
                "DRIVER": "~fastapi",
                "HOST": "127.0.0.1",
                "PORT": str(port),
                "ONEBOT_ACCESS_TOKEN": DEFAULT_TOKEN,
                "COMMAND_START": '["/"]',
                "YUJI_DATA_DIR": str(data),
                **settings,
            },
            telegram=False,
            own_plugins=("ping",),
        )
        bot = BotProcess(
            folder,
            cwd=project,
            port=port,
            env={"YUJI_DATA_DIR": str(data)},
            python=__import__("os").environ.get("BENCH_PYTHON", __import__("sys").executable),
        )
    else:
        adapter = {"bot": "ingest", "bot-stock": "stock"}[kind]
        bot = BotProcess(folder, env={**settings, "YUJI_ONEBOT_ADAPTER": adapter})
    await bot.start()
    try:
        async with bot.peer() as peer:
            await asyncio.sleep(1.0)  # the start-up's first jobs
            start = time.monotonic()
            for i in range(messages):
                if rate and i % 10 == 0:  # paced: ten messages at a time, on schedule
                    await asyncio.sleep(max(0.0, start + i / rate - time.monotonic()))
                await peer.send_event(
                    peer.group_message(
                        f"第{i}条消息，随便聊聊今天的天气",
                        group_id=710_000 + i % GROUPS,
                        message_id=1_000_000 + i,
                        user_id=30_000 + i % 37,
                    )
                )
            sent = time.monotonic() - start
            done = 0
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:
                done = count_rows(bot.data_dir, "experiences")
                if done >= messages:
                    break
                await asyncio.sleep(0.02)
            took = time.monotonic() - start
            print(f"  {kind}: sends took {sent:.2f} s; archive {took:.2f} s")
            while kind.startswith("host") and len(seen_ids(bot.cwd)) < messages:
                if time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.05)
            handled = time.monotonic() - start
        seen = len(seen_ids(bot.cwd)) if kind.startswith("host") else -1
    finally:
        await bot.stop()
    if seen >= 0:
        print(f"  {kind}: the host's own matcher saw {seen} by {handled:.2f} s")
    return took, messages - done, seen


async def main(messages: int, runs: list[str], rate: int) -> None:
    for kind in runs:
        with tempfile.TemporaryDirectory(prefix="yuji-stock-") as tmp:
            took, missing, seen = await run(kind, Path(tmp), messages, rate)
        extra = f", host matcher saw {seen}" if seen >= 0 else ""
        print(
            f"{kind:10} {messages} messages in {took:.2f} s = {messages / took:.0f} msg/s, "
            f"{missing} missing{extra}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--runs", default="host,bot")
    parser.add_argument("--rate", type=int, default=0, help="messages/s; 0: one burst")
    args = parser.parse_args()
    asyncio.run(main(args.messages, args.runs.split(","), args.rate))
