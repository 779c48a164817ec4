"""The archive writer through an outage: a store that fails keeps its rows (in order,
bounded, retried until it takes them); only a row the database refuses itself is
dropped, counted, and its chat's gap kept for the backfill."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy.exc import DataError, OperationalError

from memory_core import Settings, Yuji
from memory_core.archive.drops import ArchiveHealth, health_lines
from memory_core.archive.writer import GroupCommitWriter
from memory_core.errors import (
    ConstraintViolation,
    StorageBusy,
    StorageError,
    StorageFull,
    StorageUnavailable,
)
from memory_core.storage import Appended
from memory_core.storage.failures import write_failure
from memory_core.types import NewExperience

from .test_archive import T0, exp


class FlakyStore:
    """An `insert_many` that fails with `error` while `down`, and refuses any batch
    holding a fingerprint of `bad` with `bad_error`."""

    def __init__(self) -> None:
        self.down = False
        self.error: Exception = StorageUnavailable("[Errno 111] Connection refused")
        self.bad: set[str] = set()
        self.bad_error: Exception = ConstraintViolation("CHECK constraint failed")
        self.stored: list[str] = []
        self.tries = 0

    async def __call__(
        self, exps: Sequence[NewExperience], _at: Sequence[datetime]
    ) -> list[Appended]:
        self.tries += 1
        await asyncio.sleep(0)
        if self.down:
            raise self.error
        if any(e.fingerprint in self.bad for e in exps):
            raise self.bad_error
        self.stored.extend(e.fingerprint for e in exps)
        return [Appended(len(self.stored) - len(exps) + i + 1, True) for i in range(len(exps))]


def writer_for(store: FlakyStore, **kw: int) -> GroupCommitWriter:
    return GroupCommitWriter(store, retry_first_s=0.001, retry_max_s=0.01, **kw)


async def until(predicate: object, timeout_s: float = 5.0) -> None:
    async def wait() -> None:
        while not predicate():  # type: ignore[operator]  # noqa: ASYNC110
            await asyncio.sleep(0.001)

    await asyncio.wait_for(wait(), timeout_s)


@pytest.mark.parametrize(
    "error",
    [
        StorageUnavailable("connection refused"),
        StorageFull("database or disk is full"),
        StorageBusy("locked"),
        StorageError("disk I/O error"),
        ConnectionResetError(104, "Connection reset by peer"),
    ],
    ids=["unreachable", "full", "busy", "io", "reset"],
)
async def test_an_outage_holds_every_row_in_order_and_drops_none(error: Exception) -> None:
    store = FlakyStore()
    writer = writer_for(store, max_batch=4, capacity=100)
    await writer.put(exp(fp="before"), T0)
    await writer.flush()
    store.down, store.error = True, error
    futures = [await writer.put(exp(fp=f"m{i}"), T0) for i in range(10)]
    await until(lambda: store.tries > 5)
    health = writer.health()
    assert health.held_s is not None
    assert health.queued == 10
    assert type(error).__name__ in health.last_error
    assert not any(f.done() for f in futures)  # nobody was told "lost"
    store.down = False
    await asyncio.wait_for(writer.flush(), 5)
    assert store.stored == ["before", *(f"m{i}" for i in range(10))]  # once each, in order
    assert all(f.result().created for f in futures)
    assert writer.drops.total == 0
    assert writer.health().held_s is None
    assert writer.outages == 1


async def test_a_full_queue_during_an_outage_holds_the_senders() -> None:
    store = FlakyStore()
    store.down = True
    writer = writer_for(store, max_batch=2, capacity=4)
    for i in range(4):
        await writer.put(exp(fp=f"q{i}"), T0)
    await until(lambda: store.tries > 2)
    # The batch in flight went back to the queue: the queue is full, the next put waits.
    blocked = asyncio.create_task(writer.put(exp(fp="late"), T0))
    await asyncio.sleep(0.05)
    assert not blocked.done()
    assert writer.waited >= 1
    store.down = False
    await asyncio.wait_for(blocked, 5)
    await asyncio.wait_for(writer.flush(), 5)
    assert store.stored == ["q0", "q1", "q2", "q3", "late"]


async def test_only_the_row_the_database_refuses_is_dropped_and_counted() -> None:
    store = FlakyStore()
    store.bad = {"m3"}
    writer = writer_for(store, max_batch=10, capacity=100)
    futures = [await writer.put(exp(scope="group:7", fp=f"m{i}"), T0) for i in range(6)]
    await asyncio.wait_for(writer.flush(), 5)
    assert store.stored == ["m0", "m1", "m2", "m4", "m5"]
    assert isinstance(futures[3].exception(), ConstraintViolation)
    assert writer.drops.total == 1
    assert dict(writer.drops.by_reason) == {"ConstraintViolation": 1}
    assert writer.drops.take_gaps() == {"group:7": T0}
    assert writer.drops.take_gaps() == {}  # taken once
    lines = health_lines(writer.health())
    assert "丢弃 1 条" in lines["归档丢弃"]
    assert "ConstraintViolation 1" in lines["归档丢弃"]


async def test_the_store_failing_during_the_row_by_row_retry_keeps_the_rest() -> None:
    store = FlakyStore()
    store.bad = {"m1"}
    writer = writer_for(store, max_batch=10, capacity=100)
    real = store.__call__
    calls = 0

    async def failing_after_the_bad_row(
        exps: Sequence[NewExperience], at: Sequence[datetime]
    ) -> list[Appended]:
        nonlocal calls
        calls += 1
        if calls == 3:  # the batch, m0, then m1 (bad), then the store goes away once
            store.down = True
        elif calls > 3:
            store.down = False
        return await real(exps, at)

    writer = GroupCommitWriter(failing_after_the_bad_row, retry_first_s=0.001, max_batch=10)
    for i in range(4):
        await writer.put(exp(fp=f"m{i}"), T0)
    await asyncio.wait_for(writer.flush(), 5)
    assert store.stored == ["m0", "m2", "m3"]
    assert writer.drops.total == 1


async def test_an_unknown_failure_is_tried_a_few_times_then_dropped() -> None:
    store = FlakyStore()
    store.bad, store.bad_error = {"odd"}, RuntimeError("something nobody classified")
    writer = writer_for(store, max_batch=1, capacity=100)
    await writer.put(exp(fp="odd"), T0)
    await writer.put(exp(fp="fine"), T0)
    await asyncio.wait_for(writer.flush(), 5)
    assert store.stored == ["fine"]
    assert store.tries == 4  # odd three times, fine once
    assert dict(writer.drops.by_reason) == {"RuntimeError": 1}


def _sqlite_error(code: int) -> OperationalError:
    error = sqlite3.OperationalError("x")
    error.sqlite_errorcode = code  # type: ignore[attr-defined]
    return OperationalError("INSERT", {}, error)


class _PgError(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (StorageUnavailable("refused"), "transient"),
        (StorageFull("full"), "transient"),
        (ConnectionRefusedError(111, "Connection refused"), "transient"),
        (FileNotFoundError(2, "no socket"), "transient"),
        (TimeoutError(), "transient"),
        (_sqlite_error(sqlite3.SQLITE_FULL), "transient"),
        (_sqlite_error(sqlite3.SQLITE_BUSY), "transient"),
        (_sqlite_error(sqlite3.SQLITE_IOERR | (3 << 8)), "transient"),
        (OperationalError("INSERT", {}, _PgError("57P01")), "transient"),
        (OperationalError("INSERT", {}, _PgError("08006")), "transient"),
        (OperationalError("INSERT", {}, _PgError("53300")), "transient"),
        (OperationalError("INSERT", {}, _PgError("53100")), "transient"),
        (ConstraintViolation("NOT NULL"), "row"),
        (_sqlite_error(sqlite3.SQLITE_TOOBIG), "row"),
        (DataError("INSERT", {}, _PgError("22021")), "row"),  # a NUL byte in text
        (UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed"), "row"),
        (RuntimeError("?"), "unknown"),
    ],
)
def test_write_failures_are_told_apart_by_code_never_by_text(error: Exception, kind: str) -> None:
    assert write_failure(error) == kind


def test_status_says_when_the_store_holds_rows() -> None:
    lines = health_lines(
        ArchiveHealth(
            queued=120,
            capacity=10_000,
            held_s=12.4,
            last_error="StorageUnavailable: refused",
            outages=1,
            dropped=0,
            dropped_by_reason=(),
        )
    )
    assert lines["归档"].startswith("数据库暂时写不进（已 12 秒")
    assert "120 条消息在队列里等着重试" in lines["归档"]
    assert lines["归档丢弃"] == "本次启动以来没有丢弃过消息"


async def test_status_lines_come_from_a_process_that_archives(tmp_path: Path) -> None:
    core = await Yuji.open(Settings(data_dir=tmp_path / "data", vector_mode="off"))
    try:
        assert await core.archive.status_lines() == {}  # `yuji status`: not its to say
        await core.archive.append(exp(fp="one"))
        lines = await core.archive.status_lines()
        assert lines["归档"] == "正常，队列 0 条"
        assert lines["归档丢弃"] == "本次启动以来没有丢弃过消息"
        assert "归档丢弃" in (await core.chat_status.scope_status("group:1")).extra
    finally:
        await core.close()
