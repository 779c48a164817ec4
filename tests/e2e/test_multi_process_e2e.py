"""Issue 25, item 4 end to end: three real bot processes share one PostgreSQL store,
each with its own OneBot account and data folder; three groups, each heard by two of
the accounts; 300 messages. The leader is SIGKILLed while its consolidation batch
waits on the model. Afterwards every message is archived once, no message range is
acknowledged twice, the killed batch is delivered again by the new leader, and one
Telegram alert says leadership moved."""

from __future__ import annotations

import asyncio
import itertools
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Servers
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server
from tests.fakes.telegram_server import FakeTelegramServer, telegram_server

from .harness import BotProcess, OnebotPeer, pg_query, shared_store_env, wait_until
from .test_consolidation_e2e import consolidating_model

__all__ = ["openai_server", "telegram_server"]

pytestmark = pytest.mark.e2e

ACCOUNTS = (71001, 71002, 71003)
GROUPS = {8101: (0, 1), 8102: (1, 2), 8103: (2, 0)}
"""group -> the two bots (by index) whose accounts sit in it."""
MESSAGES = 300


class HeldModel:
    """Consolidation requests wait until `release()`; then the model answers."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.held = 0

    def __call__(self, body: dict[str, Any]) -> Reply | None:
        if body.get("tools") and not self.go.is_set():
            self.held += 1
            self.go.wait(60)
            return Reply.text("太晚了")  # its process is gone by now
        return consolidating_model(body)


async def test_three_processes_one_store(
    tmp_path: Path,
    servers: Servers,
    openai_server: FakeOpenAIServer,
    telegram_server: FakeTelegramServer,
) -> None:
    server, database = await servers.fresh("pg18")
    dsn = server.dsn(database)
    model = HeldModel()
    openai_server.handler = model
    env = {
        **openai_server.env(api_key="sk-e2e"),
        **telegram_server.env(),
        **shared_store_env(server.url(database), tmp_path / "attachments"),
        "YUJI_VECTOR_MODE": "off",
        "YUJI_CONSOLIDATION_TICK_S": "1",
        "YUJI_ELIGIBLE_MAX_WAIT_S": "1",
        "YUJI_BACKFILL_INTERVAL_S": "0",
    }
    bots = [BotProcess(tmp_path / f"bot{i}", env=env) for i in range(3)]
    await asyncio.gather(*(b.start() for b in bots))
    peers: list[OnebotPeer] = []
    try:
        for bot, account in zip(bots, ACCOUNTS, strict=True):
            peers.append(await bot.peer(self_id=account).connect())
        await wait_until(lambda: _accounts(dsn))
        base = int(time.time())
        ids = [0, 0, 0]
        groups = list(GROUPS)
        for i in range(MESSAGES):
            group = groups[i % len(groups)]
            for index in GROUPS[group]:
                ids[index] += 1  # per account, from 1: the accounts' ids collide
                await peers[index].send_event(
                    peers[index].group_message(
                        f"第{i}条：周末去爬山{'吗' if i % 2 else '了'}",
                        group_id=group,
                        message_id=ids[index],
                        user_id=30000 + i % 5,
                        nickname=f"同学{i % 5}",
                        time_=base + i // 20,
                    )
                )
        await wait_until(
            lambda: _count(dsn, "SELECT count(*) FROM experiences", MESSAGES), timeout_s=60
        )
        await wait_until(lambda: model.held >= 1, timeout_s=60)
        leader_pid = await _leader_pid(dsn)
        [leader] = [b for b in bots if b.pid == leader_pid]
        open_batches = await pg_query(
            dsn,
            "SELECT id, scope, first_id, last_id FROM consolidation_batches"
            " WHERE state NOT IN ('done', 'failed')",
        )
        assert open_batches
        await leader.stop(signal.SIGKILL)
        model.go.set()

        async def all_acked() -> bool:
            rows = await pg_query(
                dsn,
                "SELECT count(*) FROM experiences e WHERE e.id > (SELECT coalesce(max(acked_id), 0)"
                " FROM consolidation_cursors c WHERE c.scope = e.scope)",
            )
            return rows[0][0] == 0

        await wait_until(all_acked, timeout_s=60)
        assert await _leader_pid(dsn) != leader_pid
    finally:
        model.go.set()
        for peer in peers:
            await peer.close()
        await asyncio.gather(*(b.stop() for b in bots))

    # Every message once (heard by two accounts each), none of the bots' sends.
    rows = await pg_query(dsn, "SELECT scope, sender_id, sent_at, text FROM experiences")
    assert len(rows) == MESSAGES
    assert len(set(rows)) == MESSAGES
    assert len({r[3] for r in rows}) == MESSAGES
    # No message range acknowledged twice; every message acknowledged once.
    done = await pg_query(
        dsn,
        "SELECT scope, first_id, last_id, message_count FROM consolidation_batches"
        " WHERE state = 'done' ORDER BY scope, first_id",
    )
    assert sum(r[3] for r in done) == MESSAGES
    for a, b in itertools.pairwise(done):
        if a[0] == b[0]:
            assert a[2] < b[1], (a, b)
    # The killed batches failed and their messages were delivered again.
    for batch_id, scope, first_id, last_id in open_batches:
        [(state,)] = await pg_query(
            dsn, "SELECT state FROM consolidation_batches WHERE id = $1", batch_id
        )
        assert state == "failed"
        assert any(r[0] == scope and r[1] <= first_id and last_id <= r[2] for r in done)
    # One alert: leadership moved.
    texts = [m.text for m in telegram_server.messages]
    assert len(texts) == 1, texts
    assert "leader-takeover" in texts[0]


async def _count(dsn: str, sql: str, expected: int) -> bool:
    return (await pg_query(dsn, sql))[0][0] == expected


async def _accounts(dsn: str) -> bool:
    return (await pg_query(dsn, "SELECT count(*) FROM bot_accounts"))[0][0] == len(ACCOUNTS)


async def _leader_pid(dsn: str) -> int:
    [(holder,)] = await pg_query(dsn, "SELECT holder FROM leadership")
    return int(str(holder).split(" #", 1)[0].rsplit("/", 3)[2])
