"""Repository writes that once read a row and then wrote it back are single guarded
statements now (issue #18): upserts counting in SQL, inserts numbered in SQL, updates
guarded by what was read. Two handles on one file stand for two processes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import event, func, insert, select

from memory_core import EvidenceRef, NewExperience, Yuji
from memory_core.errors import ConstraintViolation
from memory_core.storage.archive.archive_repo import ArchiveRepo
from memory_core.storage.consolidation.consolidation_repo import ConsolidationRepo, Cut
from memory_core.storage.engine import PG_SNAPSHOT, PG_WRITE_TURN, Database
from memory_core.storage.memories.memory_repo import MemoryRepo
from memory_core.storage.nightly.nightly_repo import NightlyRepo
from memory_core.storage.porting.pack_repo import PackRepo
from memory_core.storage.porting.redaction_repo import RedactionRepo
from memory_core.storage.schema import experience_attachments, forget_requests, nightly_settled

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
HERE = "group:1"
DAY = "2026-11-19"


@pytest.fixture
async def other(core: Yuji) -> AsyncIterator[Database]:
    """A second handle on the same file: another process's writer."""
    second = Database(core.db.url, busy_timeout_s=10)
    yield second
    await second.dispose()


@contextmanager
def statements(db: Database) -> Iterator[list[str]]:
    """The SQL statements `db` runs meanwhile (transaction control left out)."""
    seen: list[str] = []

    def record(*args: Any) -> None:
        sql = str(args[2]).strip()
        control = ("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA", PG_WRITE_TURN.upper(), PG_SNAPSHOT)
        if not sql.upper().startswith(control):
            seen.append(sql)

    event.listen(db.engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", record)


# --- nightly steps -------------------------------------------------------------------


async def test_begin_step_counts_in_sql_and_keeps_the_detail(core: Yuji) -> None:
    repo = NightlyRepo(core.db, core.memory_repo)
    assert await repo.begin_step(HERE, DAY, "diary", T0, "host-a") == 1
    await repo.save_detail(HERE, DAY, "diary", {"reply": "草稿", "owner": "host-a"})
    await repo.fail_step(HERE, DAY, "diary", T0, "boom")
    with statements(core.db) as seen:
        assert await repo.begin_step(HERE, DAY, "diary", T0, "host-b") == 2
    assert len(seen) == 1  # no read before the write
    step = (await repo.steps(HERE, DAY))["diary"]
    assert (step.state, step.attempts, step.error) == ("running", 2, None)
    assert step.detail == {"reply": "草稿", "owner": "host-b"}


async def test_begin_step_from_two_processes_counts_every_attempt_once(
    core: Yuji, other: Database
) -> None:
    mine, theirs = NightlyRepo(core.db, core.memory_repo), NightlyRepo(other, MemoryRepo(other))
    got = await asyncio.gather(
        *((mine if n % 2 else theirs).begin_step(HERE, DAY, "cards", T0, f"p{n}") for n in range(8))
    )
    assert sorted(got) == list(range(1, 9))
    assert (await mine.steps(HERE, DAY))["cards"].attempts == 8


async def test_mark_settled_twice_keeps_the_first_night(core: Yuji) -> None:
    said = await core.archive.append(NewExperience(HERE, "s1", "42", "我养猫", sent_at=T0))
    memory = await core.memories.write(
        HERE,
        type="fact",
        subject="小明",
        content="小明养猫",
        evidence=[EvidenceRef(experience_id=said)],
    )
    repo = NightlyRepo(core.db, core.memory_repo)
    await asyncio.gather(
        repo.mark_settled(HERE, memory.memory.id, "2026-11-18", T0),
        repo.mark_settled(HERE, memory.memory.id, "2026-11-19", T0),
    )
    await repo.mark_settled(HERE, memory.memory.id, "2026-11-20", T0)
    async with core.db.read() as conn:
        rows = (await conn.execute(select(nightly_settled.c.day))).all()
    assert [r.day for r in rows] == ["2026-11-18"]


# --- cards -----------------------------------------------------------------------------


async def test_restore_cards_never_numbers_a_version_twice(core: Yuji, other: Database) -> None:
    history = [("第一版", "2026-11-17"), ("第二版", "2026-11-18"), ("第三版", DAY)]
    results = await asyncio.gather(
        PackRepo(core.db, core.memory_repo).restore_cards(HERE, "preferences", history, T0),
        PackRepo(other, MemoryRepo(other)).restore_cards(HERE, "preferences", history, T0),
    )
    assert sorted(results) == [0, 3]  # one restored the card, the other found it there
    nightly = NightlyRepo(core.db, core.memory_repo)
    await nightly.write_cards(HERE, "2026-11-20", {"preferences": "夜里改过"}, None, T0, {})
    assert (
        await PackRepo(other, MemoryRepo(other)).restore_cards(HERE, "preferences", history, T0)
        == 1
    )
    assert (
        await PackRepo(other, MemoryRepo(other)).restore_cards(HERE, "preferences", history, T0)
        == 0
    )
    cards = await nightly.card_history(HERE, "preferences")
    assert [(c.version, c.content) for c in cards] == [
        (1, "第一版"),
        (2, "第二版"),
        (3, "第三版"),
        (4, "夜里改过"),
        (5, "第三版"),
    ]


async def test_a_card_version_read_stale_is_refused_not_duplicated(core: Yuji) -> None:
    await PackRepo(core.db, core.memory_repo).restore_cards(
        HERE, "relationships", [("小明爱猫", DAY)], T0
    )
    repo = RedactionRepo(core.db)
    [(kind, version, _)] = await repo.latest_cards(HERE)
    assert await repo.add_card_version(HERE, kind, version, "（删去一行）", T0)
    assert not await repo.add_card_version(HERE, kind, version, "（过时的读）", T0)
    cards = await NightlyRepo(core.db, core.memory_repo).card_history(HERE, "relationships")
    assert [c.content for c in cards] == ["小明爱猫", "（删去一行）"]


async def test_a_summary_read_stale_is_not_written_back(core: Yuji) -> None:
    for n in range(2):
        await core.archive.append(NewExperience(HERE, f"f{n}", "42", "嗯", sent_at=T0))
    consolidation = ConsolidationRepo(core.db)
    batch = await consolidation.create(HERE, Cut(1, 2, 2, 2), "t", T0)
    assert batch is not None
    await consolidation.delivered(batch.id, T0)
    fragment_id = await consolidation.acknowledge(batch.id, "t", "extracted", "甲。乙。", T0)
    assert fragment_id is not None
    repo = RedactionRepo(core.db)
    assert await repo.rewrite_fragment(fragment_id, "甲。乙。", "乙。")
    assert not await repo.rewrite_fragment(fragment_id, "甲。乙。", "甲。")
    [fragment] = await consolidation.fragments(HERE)
    assert fragment.summary == "乙。"


# --- forget requests -------------------------------------------------------------------


async def test_two_forget_requests_at_once_share_one_row_and_every_name(
    core: Yuji, other: Database
) -> None:
    with statements(core.db) as seen:
        first = await RedactionRepo(core.db).open_request(HERE, "42", "42", ["小明"], T0)
    assert len(seen) == 1
    await RedactionRepo(core.db).finish_request(first.id, {}, T0)
    mine, theirs = await asyncio.gather(
        RedactionRepo(core.db).open_request(HERE, "42", "42", ["明明", "42"], T0),
        RedactionRepo(other).open_request(HERE, "42", "admin", ["小明同学"], T0),
    )
    assert mine.id == theirs.id != first.id
    requests = await RedactionRepo(core.db).requests(HERE)
    assert [(r.id, r.state) for r in requests] == [(first.id, "done"), (mine.id, "running")]
    assert requests[1].names == ("42", "小明", "小明同学", "明明")
    with pytest.raises(ConstraintViolation):  # the index: one running request a person
        async with core.db.write() as conn:
            await conn.execute(
                insert(forget_requests).values(
                    scope=HERE,
                    user_id="42",
                    requested_by="x",
                    names=[],
                    state="running",
                    created_at=T0,
                )
            )
    # Another person, or the same person in another chat, has a request of their own.
    assert (await RedactionRepo(other).open_request(HERE, "43", "43", [], T0)).id != mine.id
    assert (await RedactionRepo(other).open_request("group:2", "42", "42", [], T0)).id != mine.id


# --- archive links -------------------------------------------------------------------


async def test_linking_an_attachment_twice_keeps_one_link(core: Yuji, other: Database) -> None:
    said = await core.archive.append(NewExperience(HERE, "a1", "42", "[图片]", sent_at=T0))
    attachment = await core.archive.repo.record_attachment(
        sha256="ab" * 32, mime="image/png", size=3, url="http://127.0.0.1/x.png", at=T0
    )
    await asyncio.gather(
        ArchiveRepo(core.db).link(said, attachment, 0), ArchiveRepo(other).link(said, attachment, 0)
    )
    await ArchiveRepo(core.db).link(said, attachment, 0)
    async with core.db.read() as conn:
        links = await conn.scalar(select(func.count()).select_from(experience_attachments))
    assert links == 1
