"""core.archive: append, dedup, scoped reads, append-only, group commit under a burst."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from memory_core import FakeClock, Yuji
from memory_core.archive.writer import GroupCommitWriter
from memory_core.errors import NotFound, ValidationError
from memory_core.storage.archive.archive_repo import Appended
from memory_core.types import NewExperience

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)


def exp(
    scope: str = "group:1", fp: str = "m1", text_: str = "hello", **kw: object
) -> NewExperience:
    return NewExperience(
        scope=scope,
        fingerprint=fp,
        sender_id=str(kw.pop("sender_id", "42")),
        text=text_,
        sent_at=T0,
        segments=[{"type": "text", "data": {"text": text_}}],
        **kw,  # type: ignore[arg-type]
    )


async def test_append_then_get_round_trips_every_field(core: Yuji, clock: FakeClock) -> None:
    new = exp(sender_name="阿鱼", reply_to="m0", is_bot=True, source="backfill")
    experience_id = await core.archive.append(new)
    got = await core.archive.get("group:1", experience_id)
    assert got.id == experience_id
    assert (got.scope, got.fingerprint, got.sender_id, got.sender_name) == (
        "group:1",
        "m1",
        "42",
        "阿鱼",
    )
    assert got.is_bot is True
    assert got.text == "hello"
    assert got.segments == [{"type": "text", "data": {"text": "hello"}}]
    assert got.reply_to == "m0"
    assert got.sent_at == T0
    assert got.received_at == clock.now()
    assert got.source == "backfill"


async def test_duplicate_returns_existing_id_and_keeps_first(core: Yuji) -> None:
    first = await core.archive.append(exp(text_="first"))
    again = await core.archive.append(exp(text_="second try"))
    assert again == first
    assert (await core.archive.get("group:1", first)).text == "first"
    assert await core.archive.max_id("group:1") == first


async def test_same_fingerprint_in_another_scope_is_another_message(core: Yuji) -> None:
    a = await core.archive.append(exp("group:1", "m1"))
    b = await core.archive.append(exp("group:2", "m1"))
    assert a != b
    assert await core.archive.scopes() == ["group:1", "group:2"]


async def test_append_many_dedups_inside_the_batch_and_against_the_db(core: Yuji) -> None:
    existing = await core.archive.append(exp(fp="a"))
    ids = await core.archive.append_many([exp(fp="a"), exp(fp="b"), exp(fp="b"), exp(fp="c")])
    assert ids[0] == existing
    assert ids[1] == ids[2]
    assert len(set(ids)) == 3
    assert [e.fingerprint for e in await core.archive.after("group:1", 0, 10)] == ["a", "b", "c"]


async def test_reads_are_scoped(core: Yuji) -> None:
    mine = await core.archive.append(exp("group:1", "x"))
    theirs = await core.archive.append(exp("group:2", "y"))
    with pytest.raises(NotFound):
        await core.archive.get("group:1", theirs)
    with pytest.raises(NotFound):
        await core.archive.get("group:1", 999_999)
    assert [e.id for e in await core.archive.get_many("group:1", [mine, theirs])] == [mine]
    assert await core.archive.by_fingerprint("group:1", "y") is None
    found = await core.archive.by_fingerprint("group:2", "y")
    assert found is not None
    assert found.id == theirs


async def test_after_recent_and_max_id_follow_the_id_cursor(core: Yuji) -> None:
    assert await core.archive.max_id("group:1") == 0
    ids = [await core.archive.append(exp(fp=f"m{i}", text_=str(i))) for i in range(10)]
    await core.archive.append(exp("group:9", "other"))
    assert [e.id for e in await core.archive.after("group:1", ids[3], 3)] == ids[4:7]
    assert [e.id for e in await core.archive.recent("group:1", 3)] == ids[7:]
    assert [e.id for e in await core.archive.recent("group:1", 3, before_id=ids[5])] == ids[2:5]
    assert await core.archive.max_id("group:1") == ids[-1]


async def test_invalid_experiences_are_refused_before_the_queue(core: Yuji) -> None:
    with pytest.raises(ValidationError):
        await core.archive.append(exp(scope="lobby:1"))
    with pytest.raises(ValidationError):
        await core.archive.append(exp(fp=""))
    naive = NewExperience("group:1", "n", "1", "t", sent_at=datetime(2026, 1, 1))  # noqa: DTZ001
    with pytest.raises(ValidationError):
        await core.archive.append(naive)
    assert await core.archive.scopes() == []


async def test_burst_of_1000_concurrent_appends_is_stored_exactly_once(core: Yuji) -> None:
    # 1,000 distinct messages, each delivered twice (a reconnect replays them), all at once.
    messages = [exp(f"group:{i % 3}", f"burst-{i}", f"msg {i}") for i in range(1000)]
    ids = await asyncio.gather(*(core.archive.append(m) for m in messages + messages))
    assert ids[:1000] == ids[1000:]
    assert len(set(ids)) == 1000
    async with core.db.read() as conn:
        total = await conn.scalar(text("SELECT count(*) FROM experiences"))
    assert total == 1000
    # Group commit: far fewer transactions than messages.
    assert core.archive.writer.batches < 100


async def test_flush_waits_for_pending_commits(core: Yuji) -> None:
    tasks = [asyncio.create_task(core.archive.append(exp(fp=f"f{i}"))) for i in range(50)]
    await asyncio.sleep(0)
    await core.archive.flush()
    assert len(await core.archive.after("group:1", 0, 100)) == 50
    await asyncio.gather(*tasks)


async def test_one_bad_row_fails_alone() -> None:
    stored: list[str] = []

    async def insert_many(exps: Sequence[NewExperience], _at: Sequence[datetime]) -> list[Appended]:
        if any(e.fingerprint == "bad" for e in exps):
            raise RuntimeError("CHECK constraint failed")
        stored.extend(e.fingerprint for e in exps)
        return [Appended(len(stored) - len(exps) + i + 1, True) for i in range(len(exps))]

    writer = GroupCommitWriter(insert_many, max_batch=10)
    results = await asyncio.gather(
        *(writer.submit(exp(fp=fp), T0) for fp in ("ok1", "bad", "ok2")),
        return_exceptions=True,
    )
    await writer.close()
    assert isinstance(results[0], Appended)
    assert isinstance(results[1], RuntimeError)
    assert isinstance(results[2], Appended)
    assert stored == ["ok1", "ok2"]


async def test_received_at_comes_from_the_clock(core: Yuji, clock: FakeClock) -> None:
    clock.advance(timedelta(hours=3))
    got = await core.archive.get("group:1", await core.archive.append(exp()))
    assert got.received_at == T0 + timedelta(hours=4)


class HangingInsert:
    """An `insert_many` whose transactions hang until `release` is set."""

    def __init__(self) -> None:
        self.stored: list[str] = []
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(
        self, exps: Sequence[NewExperience], _at: Sequence[datetime]
    ) -> list[Appended]:
        if not self.release.is_set():
            self.entered.set()
            await self.release.wait()
        self.stored.extend(e.fingerprint for e in exps)
        return [Appended(len(self.stored) - len(exps) + i + 1, True) for i in range(len(exps))]


async def cancel_writer_task(writer: GroupCommitWriter) -> None:
    """Cancel the writer's task mid-transaction, as the loop does at shutdown."""
    task = writer._task  # pyright: ignore[reportPrivateUsage]
    assert task is not None
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_a_cancelled_writer_task_loses_nothing_and_close_still_flushes() -> None:
    insert_many = HangingInsert()
    writer = GroupCommitWriter(insert_many, max_batch=10)
    submitters = [asyncio.create_task(writer.submit(exp(fp=f"c{i}"), T0)) for i in range(3)]
    await insert_many.entered.wait()
    await cancel_writer_task(writer)
    insert_many.release.set()
    await asyncio.wait_for(writer.close(), 5)
    assert sorted(insert_many.stored) == ["c0", "c1", "c2"]
    results = await asyncio.wait_for(asyncio.gather(*submitters), 5)
    assert all(isinstance(r, Appended) for r in results)


async def test_a_flush_waiting_while_the_writer_task_dies_does_not_hang() -> None:
    insert_many = HangingInsert()
    writer = GroupCommitWriter(insert_many, max_batch=10)
    submitter = asyncio.create_task(writer.submit(exp(fp="w1"), T0))
    await insert_many.entered.wait()
    flusher = asyncio.create_task(writer.flush())
    await asyncio.sleep(0)
    await cancel_writer_task(writer)
    insert_many.release.set()
    await asyncio.wait_for(flusher, 5)
    assert insert_many.stored == ["w1"]
    assert isinstance(await asyncio.wait_for(submitter, 5), Appended)
    await writer.close()


async def test_a_result_count_mismatch_fails_the_callers_instead_of_hanging_them() -> None:
    async def insert_many(exps: Sequence[NewExperience], _at: Sequence[datetime]) -> list[Appended]:
        return []  # a broken repository: fewer results than rows

    writer = GroupCommitWriter(insert_many, max_batch=10)
    results = await asyncio.wait_for(
        asyncio.gather(
            *(writer.submit(exp(fp=f"x{i}"), T0) for i in range(2)), return_exceptions=True
        ),
        5,
    )
    assert all(isinstance(r, Exception) for r in results)
    await asyncio.wait_for(writer.close(), 5)
