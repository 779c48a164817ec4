"""Two processes of one deployment, each with its own account in one group, archive
the same messages at the same moment: however their batches are ordered, split and
interleaved, and before either account is recorded, each message is archived once.
On PostgreSQL the two processes are two `Database` handles on the server (two pools,
real concurrent transactions); on SQLite two handles on one file."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from memory_core import NewExperience, Yuji
from memory_core.storage.archive.archive_repo import ArchiveRepo
from memory_core.storage.engine import Database
from memory_core.storage.schema import experiences

A, B = "20001", "20002"
T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
_groups = itertools.count(1)


@pytest.fixture
async def second(core: Yuji) -> AsyncIterator[Database]:
    """The other process's handle on the same store."""
    db = Database(core.db.url)
    yield db
    await db.dispose()


def _message(scope: str, i: int, account: str, fingerprint: str) -> NewExperience:
    """Message `i` as `account` heard it: every fourth is the bot's own send by A,
    which A's process archives with its own clock (sub-second), B with the server's."""
    own = i % 4 == 3
    sent_at = T0 + timedelta(seconds=i // 3)
    if own and account == A:
        sent_at += timedelta(milliseconds=370)
    return NewExperience(
        scope=scope,
        fingerprint=fingerprint,
        sender_id=A if own else str(500 + i % 3),
        text=f"第{i}句" if i % 5 else "哈哈哈",  # "哈哈哈" repeats, at other seconds
        sent_at=sent_at,
        account=account,
        is_bot=own and account == A,
    )


def _batches(order: list[int], cuts: set[int]) -> list[list[int]]:
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(order)), len(order)]
    return [order[a:b] for a, b in itertools.pairwise(bounds) if b > a]


orders = st.integers(1, 14).flatmap(
    lambda n: st.tuples(
        st.permutations(range(n)),
        st.permutations(range(n)),
        st.sets(st.integers(1, n)),
        st.sets(st.integers(1, n)),
        st.lists(st.integers(0, 3), min_size=2 * n, max_size=2 * n),
    )
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(orders)
async def test_each_message_once_however_two_accounts_interleave(
    core: Yuji,
    second: Database,
    orders: tuple[list[int], list[int], set[int], set[int], list[int]],
) -> None:
    order_a, order_b, cuts_a, cuts_b, pauses = orders
    scope = f"group:{next(_groups)}"
    n = len(order_a)
    # Per-account ids from 1 in the order each heard them: the two accounts' ids collide.
    heard = {
        A: [_message(scope, i, A, str(k + 1)) for k, i in enumerate(order_a)],
        B: [_message(scope, i, B, str(k + 1)) for k, i in enumerate(order_b)],
    }
    # Each account also hears two messages of its own group-mates the other missed.
    extra = {
        acc: [
            NewExperience(
                scope=scope,
                fingerprint=f"x{j}",
                sender_id="777",
                text=f"只有{acc}听到{j}",
                sent_at=T0,
                account=acc,
            )
            for j in range(2)
        ]
        for acc in (A, B)
    }

    async def run(db: Database, account: str, order_cuts: set[int], pause: list[int]) -> None:
        repo = ArchiveRepo(db)
        positions = _batches(list(range(n)), order_cuts)
        for batch, wait in zip(positions, pause, strict=False):
            for _ in range(wait):
                await asyncio.sleep(0)
            exps = [heard[account][p] for p in batch]
            await repo.insert_many(exps, [T0] * len(exps))
        await repo.insert_many(extra[account], [T0] * 2)

    await asyncio.gather(run(core.db, A, cuts_a, pauses[:n]), run(second, B, cuts_b, pauses[n:]))
    e = experiences.c
    async with core.db.read() as conn:
        texts = [
            (str(t), int(c))
            for t, c in await conn.execute(
                select(e.text, func.count()).where(e.scope == scope).group_by(e.text)
            )
        ]
        stored = int(await conn.scalar(select(func.count()).where(e.scope == scope)) or 0)
    expected = {_message(scope, i, A, "").text for i in range(n)}
    laughs = sum(1 for i in range(n) if not i % 5)
    assert stored == n + 4
    assert {t for t, _ in texts} == expected | {x.text for xs in extra.values() for x in xs}
    assert all(c == (laughs if t == "哈哈哈" else 1) for t, c in texts), texts
