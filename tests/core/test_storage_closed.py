"""A closed database refuses work: a job that reaches it during shutdown gets
StorageClosed, and no connection is opened on a pool nobody will close again (such a
connection is later collected unclosed, which a test run reports as a ResourceWarning
from wherever the collector happens to run)."""

from __future__ import annotations

import asyncio
import gc
import warnings
from pathlib import Path

import pytest
from sqlalchemy import text

from memory_core.errors import StorageClosed
from memory_core.storage.engine import Database


async def test_reads_and_writes_after_dispose_are_refused(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")
    async with db.write() as conn:
        await conn.execute(text("CREATE TABLE t (x INTEGER)"))
    await db.dispose()
    with pytest.raises(StorageClosed):
        async with db.read() as conn:
            await conn.execute(text("SELECT 1"))
    with pytest.raises(StorageClosed):
        async with db.write() as conn:
            await conn.execute(text("INSERT INTO t VALUES (1)"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        gc.collect()  # nothing was left open to be collected


async def test_a_write_waiting_its_turn_when_the_database_closes_is_refused(
    tmp_path: Path,
) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")
    release = asyncio.Event()

    async def holder() -> None:
        async with db.write() as conn:
            await conn.execute(text("CREATE TABLE t (x INTEGER)"))
            await release.wait()

    async def waiter() -> None:
        async with db.write() as conn:
            await conn.execute(text("INSERT INTO t VALUES (1)"))

    first = asyncio.create_task(holder())
    await asyncio.sleep(0.05)
    second = asyncio.create_task(waiter())
    await asyncio.sleep(0.05)
    db._closed = True  # pyright: ignore[reportPrivateUsage]  (dispose's first step)
    release.set()
    await first
    with pytest.raises(StorageClosed):
        await second
    await db.dispose()
