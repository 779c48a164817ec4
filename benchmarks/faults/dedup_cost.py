"""What the cross-account check costs an archive with one account (issue 33, item 1).

    .venv/bin/python benchmarks/faults/dedup_cost.py [--messages 20000]

Every live row names its account, and the check looks for another account's copy
whatever the deployment has registered (memory_core/storage/archive/archive_dedup.py), so a bot
with one QQ account pays one indexed read per batch. The worst case is measured: a
burst of N messages of 20 chats, all sent within the same few seconds (so every row
already archived is inside the check's window), through `core.archive.append`, on
SQLite. Figures in docs/errors.md.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from archive_throughput import message

from memory_core import Settings, Yuji


async def burst(n: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        core = await Yuji.open(Settings(data_dir=Path(folder), vector_mode="off"))
        try:
            messages = [replace(message(i), account="10001") for i in range(n)]
            started = time.perf_counter()
            await asyncio.gather(*(core.archive.append(m) for m in messages))
            return n / (time.perf_counter() - started)
        finally:
            await core.close()


def main() -> None:
    parser = argparse.ArgumentParser(description="cost of the cross-account check")
    parser.add_argument("--messages", type=int, default=20_000)
    args = parser.parse_args()
    rate = asyncio.run(burst(args.messages))
    print(f"{rate:,.0f} messages/s, one account, {args.messages} in one burst")


if __name__ == "__main__":
    main()
