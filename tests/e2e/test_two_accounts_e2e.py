"""Issue 33, item 1 end to end: two real bot processes on one PostgreSQL store, each
with its own QQ account in the same group, started together; the moment both peers
connect (no waiting for either account to be recorded: that races the first frames),
both deliver the same 60 messages (same sender, second and text, per-account message
ids that collide) and 20 of their own, all at once. The group holds exactly 100
messages, each once."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.conftest import Servers

from .harness import BotProcess, OnebotPeer, pg_query, shared_store_env, wait_until

pytestmark = pytest.mark.e2e

ACCOUNTS = (72001, 72002)
GROUP = 8201
SHARED = 60
OWN = 20


async def _deliver(peer: OnebotPeer, index: int, base: int) -> None:
    frames = [
        peer.group_message(
            f"第{i}条：明天几点集合{'吗' if i % 2 else '呀'}",
            group_id=GROUP,
            message_id=i + 1,  # per account from 1: the two accounts' ids collide
            user_id=30000 + i % 5,
            nickname=f"同学{i % 5}",
            time_=base + i // 20,
        )
        for i in range(SHARED)
    ]
    frames += [
        peer.group_message(
            f"只有{index}号听见的第{j}句",
            group_id=GROUP,
            message_id=SHARED + 1 + j,
            user_id=31000 + j % 3,
            time_=base + j // 10,
        )
        for j in range(OWN)
    ]
    # Own messages in between the shared ones, as a real connection interleaves them.
    frames = [f for pair in zip(frames[:SHARED:3], frames[SHARED:], strict=False) for f in pair] + [
        f for k, f in enumerate(frames[:SHARED]) if k % 3 or k // 3 >= OWN
    ]
    for frame in frames:
        await peer.send_event(frame)


async def test_two_accounts_in_one_group_archive_each_message_once(
    tmp_path: Path, servers: Servers
) -> None:
    server, database = await servers.fresh("pg18")
    dsn = server.dsn(database)
    env = {
        **shared_store_env(server.url(database), tmp_path / "attachments"),
        "YUJI_VECTOR_MODE": "off",
        "YUJI_BACKFILL_INTERVAL_S": "0",
    }
    bots = [BotProcess(tmp_path / f"bot{i}", env=env) for i in range(2)]
    await asyncio.gather(*(b.start() for b in bots))
    peers = [bot.peer(self_id=account) for bot, account in zip(bots, ACCOUNTS, strict=True)]
    try:
        await asyncio.gather(*(p.connect() for p in peers))
        base = int(time.time())
        await asyncio.gather(*(_deliver(p, i, base) for i, p in enumerate(peers)))

        async def all_heard() -> bool:
            rows = await pg_query(dsn, "SELECT count(DISTINCT text) FROM experiences")
            return rows[0][0] == SHARED + 2 * OWN

        await wait_until(all_heard, timeout_s=60)
    finally:
        for peer in peers:
            await peer.close()
        codes = await asyncio.gather(*(b.stop() for b in bots))  # drains the archive
    assert codes == [0, 0]
    rows = await pg_query(dsn, "SELECT text, account FROM experiences")
    texts = [r[0] for r in rows]
    assert len(texts) == SHARED + 2 * OWN, sorted(texts)
    assert len(set(texts)) == len(texts)
    # Each account's own messages are its own rows; the shared ones went to whichever won.
    for index, account in enumerate(ACCOUNTS):
        mine = {r[1] for r in rows if r[0].startswith(f"只有{index}号")}
        assert mine == {str(account)}
