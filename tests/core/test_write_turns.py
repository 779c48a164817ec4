"""Writer turns across processes. On PostgreSQL the archive's inserts take their
chats' turns (and the deployment's, shared): inserts of two chats commit side by side,
two of one chat take turns, and every other writer waits for them and they for it.
SQLite keeps one writer whatever the chats. A second `Database` on the same store is
another process; its short busy timeout turns "would wait" into `StorageBusy`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, text

from memory_core import NewExperience, Yuji
from memory_core.errors import StorageBusy
from memory_core.storage.archive.archive_repo import ArchiveRepo
from memory_core.storage.engine import Database
from memory_core.storage.fulltext import fts
from memory_core.storage.schema import experiences

from .test_fulltext_counts import recounted

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
A = "group:1"
SHARD = f"SELECT hashtext(left(:key, {fts.KEY_LENGTH})) & 63"


@pytest.fixture
async def other(core: Yuji) -> AsyncIterator[Database]:
    """Another process's handle, which gives up on a lock after half a second."""
    second = Database(core.db.url, busy_timeout_s=0.5)
    yield second
    await second.dispose()


def said(scope: str, n: int, start: int = 0, account: str | None = None) -> list[NewExperience]:
    return [
        NewExperience(
            scope=scope,
            fingerprint=f"{scope}-{i}",
            sender_id=str(500 + i % 7),
            sender_name=f"群友{i % 7}",
            text=f"第{i}条：周末去海边烧烤，记得带炭",
            sent_at=T0 + timedelta(seconds=i),
            account=account,
        )
        for i in range(start, start + n)
    ]


async def archive(db: Database, exps: list[NewExperience]) -> list[int]:
    appended = await ArchiveRepo(db).insert_many(exps, [T0] * len(exps))
    return [a.id for a in appended]


async def of_another_shard(db: Database, scope: str) -> str:
    """A chat whose full-text totals live in another shard than `scope`'s (chats that
    share one wait for each other there, which is not what these tests are about)."""
    async with db.read() as conn:

        async def shard(chat: str) -> int:
            return int(await conn.scalar(text(SHARD), {"key": fts.scope_key(chat)}) or 0)

        mine = await shard(scope)
        for n in range(2, 100):
            if await shard(f"group:{n}") != mine:
                return f"group:{n}"
    raise AssertionError("every chat in one shard")


async def rows_of(db: Database, scope: str) -> list[int]:
    async with db.read() as conn:
        found = await conn.scalars(
            select(experiences.c.id).where(experiences.c.scope == scope).order_by(experiences.c.id)
        )
        return list(found)


@pytest.mark.pg_only("SQLite has one writer for the whole file")
async def test_inserts_of_two_chats_commit_side_by_side(core: Yuji, other: Database) -> None:
    b = await of_another_shard(core.db, A)
    async with core.db.write(chats={A}) as conn:
        held = await ArchiveRepo(core.db).insert_many(said(A, 40), [T0] * 40, conn=conn)
        # A's transaction is open, its full-text rows counted: B does not wait for it.
        theirs = await archive(other, said(b, 30))
        assert len(set(theirs)) == 30
        assert await rows_of(other, b) == sorted(theirs)
    assert await rows_of(core.db, A) == sorted(a.id for a in held)
    await recounted(core, "message_fts")  # both chats' counts, in their shards


@pytest.mark.pg_only("SQLite has one writer for the whole file")
async def test_two_inserts_of_one_chat_take_turns(core: Yuji, other: Database) -> None:
    async with core.db.write(chats={A}) as conn:
        first = await ArchiveRepo(core.db).insert_many(said(A, 10), [T0] * 10, conn=conn)
        with pytest.raises(StorageBusy):
            await archive(other, said(A, 10, start=10))
    assert await rows_of(core.db, A) == sorted(a.id for a in first)  # nothing of the other
    later = await archive(other, said(A, 10, start=10))
    # Taking turns is what keeps a chat's ids in commit order (its watermark relies on it).
    assert min(later) > max(a.id for a in first)


@pytest.mark.pg_only("SQLite has one writer for the whole file")
async def test_every_other_writer_waits_for_the_chats_and_they_for_it(
    core: Yuji, other: Database
) -> None:
    b = await of_another_shard(core.db, A)
    async with core.db.write(chats={A}) as conn:
        await ArchiveRepo(core.db).insert_many(said(A, 5), [T0] * 5, conn=conn)
        with pytest.raises(StorageBusy):
            async with other.write() as theirs:
                await theirs.execute(text("SELECT 1"))
    async with core.db.write() as conn:
        await conn.execute(text("SELECT 1"))
        with pytest.raises(StorageBusy):
            await archive(other, said(b, 5))
    assert await rows_of(core.db, b) == []
    assert len(await archive(other, said(b, 5))) == 5


@pytest.mark.only_on("sqlite", reason="the one-writer rule of SQLite itself")
async def test_on_sqlite_chats_of_a_write_change_nothing(core: Yuji) -> None:
    second = Database(core.db.url, busy_timeout_s=0.2)
    try:
        async with core.db.write(chats={A}) as conn:
            await ArchiveRepo(core.db).insert_many(said(A, 5), [T0] * 5, conn=conn)
            with pytest.raises(StorageBusy):
                await archive(second, said("group:2", 5))
    finally:
        await second.dispose()


async def test_a_burst_of_one_second_heard_by_two_accounts_is_archived_once(core: Yuji) -> None:
    """A thousand messages of one second, each heard by both accounts, in one batch
    and then again in a second: matching copies by chat, sender and text (not every
    pair) still finds each message's copy and no other."""
    for account in ("10001", "10002"):
        await core.deployment.accounts.connected(account)
    heard = [
        NewExperience(
            scope=A,
            fingerprint=f"{account}:{i}",  # each account numbers messages its own way
            sender_id=str(500 + i % 20),
            text=f"第{i % 500}句" + ("！" if i >= 500 else ""),
            sent_at=T0,
            account=account,
        )
        for i in range(1000)
        for account in ("10001", "10002")
    ]
    first = await archive(core.db, heard[:1200])
    second = await archive(core.db, heard[1200:])
    ids = first + second
    assert ids[0::2] == ids[1::2]  # each account's copy found the other's row
    assert len(set(ids)) == 1000
    async with core.db.read() as conn:
        assert await conn.scalar(select(func.count()).select_from(experiences)) == 1000
