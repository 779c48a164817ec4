"""The archive writer's bounded queue: backpressure instead of growth, a drain with a
deadline that reports what it could not write, by chat; received rows gathered into
one transaction until someone waits for one."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import datetime

import pytest

from memory_core import NewExperience, Yuji
from memory_core.archive.writer import GroupCommitWriter
from memory_core.errors import ArchiveClosed
from memory_core.storage.archive.archive_repo import Appended

from .test_archive import T0, HangingInsert, exp


async def test_a_full_queue_makes_put_wait_and_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    insert_many = HangingInsert()
    writer = GroupCommitWriter(insert_many, max_batch=2, capacity=4)
    futures = [await writer.put(exp(fp=f"q{i}"), T0) for i in range(2)]
    await insert_many.entered.wait()  # q0, q1 are in the hanging transaction
    futures += [await writer.put(exp(fp=f"q{i}"), T0) for i in range(2, 6)]
    assert writer.depth == 4
    with caplog.at_level(logging.WARNING, logger="yuji.archive"):
        blocked = [asyncio.create_task(writer.put(exp(fp=f"w{i}"), T0)) for i in range(3)]
        await asyncio.sleep(0.05)
    assert not any(t.done() for t in blocked)  # backpressure: nobody got in
    assert writer.depth == 4  # and the queue did not grow
    assert writer.waited == 3
    full = [r for r in caplog.records if "archive queue full" in r.getMessage()]
    assert len(full) == 1  # once, not once per waiting message
    insert_many.release.set()
    futures += await asyncio.gather(*blocked)
    await asyncio.wait_for(writer.close(), 5)
    assert sorted(insert_many.stored) == sorted(
        [f"q{i}" for i in range(6)] + [f"w{i}" for i in range(3)]
    )
    assert all(f.done() and not f.exception() for f in futures)


async def test_drain_reports_what_the_deadline_left_by_chat() -> None:
    insert_many = HangingInsert()
    writer = GroupCommitWriter(insert_many, max_batch=2, capacity=100)
    futures = [await writer.put(exp(fp=f"a{i}", scope="group:1"), T0) for i in range(3)]
    futures += [await writer.put(exp(fp=f"b{i}", scope="group:2"), T0) for i in range(2)]
    await insert_many.entered.wait()
    report = await writer.drain(0.1)  # the transaction never finishes in time
    assert report.drained == 0
    assert report.left == {"group:1": 3, "group:2": 2}
    assert report.lost == 5
    assert all(isinstance(f.exception(), ArchiveClosed) for f in futures)
    with pytest.raises(ArchiveClosed):
        await writer.put(exp(fp="late"), T0)


async def test_drain_writes_everything_queued_before_the_deadline(core: Yuji) -> None:
    for i in range(300):
        await core.archive.enqueue(exp(fp=f"d{i}", scope=f"group:{i % 3}"))
    report = await core.archive.drain(30.0)
    assert report.left == {}
    assert report.drained == 300
    counts = (await core.archive.stats()).counts.experiences
    assert sum(n for by_source in counts.values() for n in by_source.values()) == 300


class RecordingInsert:
    """An `insert_many` that records the fingerprints of each transaction."""

    def __init__(self) -> None:
        self.transactions: list[list[str]] = []

    async def __call__(
        self, exps: Sequence[NewExperience], _at: Sequence[datetime]
    ) -> list[Appended]:
        self.transactions.append([e.fingerprint for e in exps])
        done = sum(map(len, self.transactions))
        return [Appended(done - len(exps) + i + 1, True) for i in range(len(exps))]


async def test_received_rows_gather_into_one_transaction() -> None:
    insert_many = RecordingInsert()
    writer = GroupCommitWriter(insert_many, gather_s=1.0)
    futures = []
    for i in range(5):  # one at a time, the writer free to run between them
        futures.append(writer.offer(exp(fp=f"g{i}"), T0))
        await asyncio.sleep(0)
    await asyncio.gather(*[f for f in futures if f is not None])
    assert insert_many.transactions == [[f"g{i}" for i in range(5)]]


async def test_a_row_someone_waits_for_ends_the_gathering() -> None:
    insert_many = RecordingInsert()
    writer = GroupCommitWriter(insert_many, gather_s=3600.0)  # only a waiter ends it
    for i in range(3):
        await writer.put(exp(fp=f"r{i}"), T0)
        await asyncio.sleep(0)
    assert insert_many.transactions == []  # gathering
    appended = await asyncio.wait_for(writer.submit(exp(fp="cmd"), T0), 5)
    assert appended.id == 4
    assert insert_many.transactions == [["r0", "r1", "r2", "cmd"]]
    await writer.put(exp(fp="later"), T0)  # and the next received row gathers again
    await asyncio.sleep(0)
    assert insert_many.transactions == [["r0", "r1", "r2", "cmd"]]
    report = await asyncio.wait_for(writer.drain(5.0), 10)  # a drain does not wait for it
    assert (report.drained, report.left) == (1, {})
    assert insert_many.transactions[-1] == ["later"]


async def test_hurry_commits_what_is_queued_without_gathering_more() -> None:
    insert_many = RecordingInsert()
    writer = GroupCommitWriter(insert_many, gather_s=3600.0)
    futures = [writer.offer(exp(fp=f"h{i}"), T0) for i in range(2)]
    await asyncio.sleep(0)
    assert insert_many.transactions == []
    writer.hurry()  # a wake waits for its message
    await asyncio.wait_for(asyncio.gather(*[f for f in futures if f is not None]), 5)
    assert insert_many.transactions == [["h0", "h1"]]
    await writer.close()
