"""How long `yuji copy-store` takes per 100,000 experiences.

    .venv/bin/python -m benchmarks.copy_store [--rows 100000] [--to URL] [--chunk 2000]

Builds a store of `--rows` experiences (messages of ~40 characters with their
segments JSON) in seven chats, one memory per 10 messages, and every chat's
consolidation watermark below only the newest 1,000 messages (the message index holds
those, as a kept-up bot's does), written straight through the storage layer; then copies
it with `copy_store` into a fresh SQLite file (or the empty store `--to` names) and
prints the wall time, the rows per second, and the seconds per 100,000 experiences.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import insert

from benchmarks.backup_time import fill as fill_store
from memory_core import FakeClock
from memory_core.porting.copy_report import report_lines
from memory_core.porting.copy_store import CHUNK_ROWS, copy_store
from memory_core.storage import migrate
from memory_core.storage.engine import Database
from memory_core.storage.schema import consolidation_cursors

WHEN = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
CHATS = 7


async def fill(db: Database, rows: int) -> None:
    """backup_time's store, with the last 1,000 messages of each chat not yet
    consolidated (so the copy rebuilds some of the recent-chat index too)."""
    await fill_store(db, rows)
    async with db.write() as conn:
        await conn.execute(
            insert(consolidation_cursors),
            [
                {
                    "scope": f"group:{chat}",
                    "delivered_id": max(rows - 1000, 0),
                    "acked_id": max(rows - 1000, 0),
                    "updated_at": WHEN,
                }
                for chat in range(CHATS)
            ],
        )


async def main(rows: int, to: str | None, chunk: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source_url = f"sqlite+aiosqlite:///{Path(tmp) / 'source.db'}"
        source = Database(source_url)
        try:
            await migrate.upgrade(source)
            t = time.perf_counter()
            await fill(source, rows)
            print(
                f"filled {rows} experiences + {rows // 10} memories in {time.perf_counter() - t:.1f} s"
            )
        finally:
            await source.dispose()
        target = to or f"sqlite+aiosqlite:///{Path(tmp) / 'target.db'}"
        report = await copy_store(source_url, target, clock=FakeClock(WHEN), chunk_rows=chunk)
        print("\n".join(report_lines(report)))
        per_100k = report.seconds * 100_000 / rows
        print(
            f"copy-store: {report.seconds:.1f} s for {report.copied} rows "
            f"({report.copied / report.seconds:,.0f} rows/s), {per_100k:.1f} s per 100,000 experiences"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="experiences in the store")
    parser.add_argument("--to", default=None, help="an empty target store (default: a temp file)")
    parser.add_argument("--chunk", type=int, default=CHUNK_ROWS, help="rows per transaction")
    args = parser.parse_args()
    asyncio.run(main(args.rows, args.to, args.chunk))
