"""The store goes away under real bots (`bot.py`) fed by NapCat-like clients on
loopback. The full drills (`run_outage.py`) and the short CI forms
(`tests/faults/test_outage_drills.py`) call the same functions with different sizes.

- `pg_restart`: bot processes on one PostgreSQL 18 server, each archiving its own
  group at `rate` messages a second; the postmaster is SIGKILLed `kill_at_s` in and
  started again on the same data directory `outage_s` later.
- `disk_full` (tests/faults/tmpfs_full.py): a bot whose data folder is a small tmpfs.

Figures: messages sent, archived, duplicates, the outage's length, and the time from
the store's return until the last message sent was archived; the Telegram alerts
(a fake Bot API server on loopback); whether every process is still up.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from memory_core.storage.deployment.leader_lock import LEADER_LOCK
from tests.e2e.harness import BotProcess, OnebotPeer, pg_query, shared_store_env
from tests.fakes.telegram_server import FakeTelegramServer
from tests.faults.pg_server import KillableServer

GROUP0 = 9100
ACCOUNT0 = 81000
DOWN_TEXT = "数据库连不上了"
UP_TEXT = "数据库恢复了"
POLL_S = 0.2


@dataclass
class OutageFigures:
    processes: int
    rate: int
    """Messages a second, per process."""
    sent: int
    archived: int
    duplicates: int
    per_group: dict[int, tuple[int, int]]
    """group -> (sent, archived once)."""
    outage_s: float
    """SIGKILL of the postmaster -> the restarted server accepting connections."""
    catch_up_s: float
    """Server back -> every message sent until then archived (the backlog written)."""
    all_archived_s: float
    """Server back -> the last message sent archived (sending goes on meanwhile)."""
    after_last_send_s: float
    """The last message sent -> every message archived (0: nothing was still waiting)."""
    alerts: list[str]
    alive: bool
    leaders: int
    """Sessions holding the leader's lock once all is archived (must be 1)."""
    logs: list[str] = field(default_factory=list[str])

    @property
    def down_alerts(self) -> int:
        return sum(DOWN_TEXT in a for a in self.alerts)

    @property
    def up_alerts(self) -> int:
        return sum(UP_TEXT in a for a in self.alerts)


def message(peer: OnebotPeer, group: int, i: int, base: int) -> dict[str, object]:
    return peer.group_message(
        f"第{i}条：明天几点集合？",
        group_id=group,
        message_id=1_000_000 + i,
        user_id=30_000 + i % 7,
        nickname=f"同学{i % 7}",
        time_=base + i // 50,
    )


async def paced(
    peer: OnebotPeer, group: int, count: int, rate: int, progress: dict[int, int]
) -> None:
    base = int(time.time())
    t0 = time.monotonic()
    for i in range(count):
        delay = t0 + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        await peer.send_event(message(peer, group, i, base))
        progress[group] = i + 1


async def _counts(dsn: str) -> dict[str, tuple[int, int]] | None:
    try:
        rows = await pg_query(
            dsn,
            "SELECT scope, count(*), count(DISTINCT fingerprint) FROM experiences GROUP BY scope",
        )
    except (OSError, Exception):  # the server is away (asyncpg raises its own errors)
        return None
    return {str(r[0]): (int(r[1]), int(r[2])) for r in rows}


async def _leaders(dsn: str) -> int:
    rows = await pg_query(
        dsn,
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
        f" AND classid = 0 AND objid = {LEADER_LOCK} AND objsubid = 1",
    )
    return int(rows[0][0])


async def pg_restart(
    tmp: Path,
    *,
    processes: int = 2,
    rate: int = 200,
    seconds: float = 20.0,
    kill_at_s: float = 5.0,
    outage_s: float = 10.0,
    settle_s: float = 120.0,
) -> OutageFigures:
    server = KillableServer()
    telegram = FakeTelegramServer().start()
    bots: list[BotProcess] = []
    peers: list[OnebotPeer] = []
    try:
        server.start()
        from tests.backends import admin

        await admin(server.server, "CREATE DATABASE yuji")
        dsn = server.dsn("yuji")
        env = {
            **telegram.env(),
            **shared_store_env(server.url("yuji"), tmp / "attachments"),
            "YUJI_VECTOR_MODE": "off",
            "YUJI_BACKFILL_INTERVAL_S": "0",
        }
        bots = [BotProcess(tmp / f"bot{i}", env=env) for i in range(processes)]
        for bot in bots:  # one at a time: each runs the migrations check on start
            await bot.start()
        for i, bot in enumerate(bots):
            peers.append(await bot.peer(self_id=ACCOUNT0 + i).connect())
        count = int(rate * seconds)
        progress: dict[int, int] = {}
        sending = [
            asyncio.create_task(paced(peer, GROUP0 + i, count, rate, progress))
            for i, peer in enumerate(peers)
        ]
        await asyncio.sleep(kill_at_s)
        server.kill()
        killed = time.monotonic()
        await asyncio.sleep(outage_s)
        await asyncio.to_thread(server.start)
        back = time.monotonic()
        backlog = dict(progress)  # sent until the server was back
        caught_up: float | None = None
        done = back
        last_send: float | None = None
        deadline = time.monotonic() + seconds + settle_s
        counts: dict[str, tuple[int, int]] = {}
        while time.monotonic() < deadline:
            counts = await _counts(dsn) or counts
            archived = {g: counts.get(f"group:{g}", (0, 0))[1] for g in backlog}
            if caught_up is None and all(archived[g] >= n for g, n in backlog.items()):
                caught_up = time.monotonic()
            if last_send is None and all(t.done() for t in sending):
                last_send = time.monotonic()
            if last_send is not None and all(archived[g] >= count for g in backlog):
                done = time.monotonic()
                break
            await asyncio.sleep(POLL_S)
        await asyncio.gather(*sending)
        last_send = last_send or time.monotonic()
        leaders = 0
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(30):
                while (leaders := await _leaders(dsn)) != 1:  # noqa: ASYNC110
                    await asyncio.sleep(POLL_S)
        await asyncio.sleep(2.0)  # an alert's background send
        alive = all(b.running for b in bots)
        per_group = {
            GROUP0 + i: (count, counts.get(f"group:{GROUP0 + i}", (0, 0))[1])
            for i in range(processes)
        }
        total = sum(c[0] for c in counts.values())
        distinct = sum(c[1] for c in counts.values())
        return OutageFigures(
            processes=processes,
            rate=rate,
            sent=count * processes,
            archived=distinct,
            duplicates=total - distinct,
            per_group=per_group,
            outage_s=back - killed,
            catch_up_s=(caught_up or done) - back,
            all_archived_s=done - back,
            after_last_send_s=max(0.0, done - last_send),
            alerts=[m.text for m in telegram.messages],
            alive=alive,
            leaders=leaders,
            logs=[b.log_text() for b in bots],
        )
    finally:
        for peer in peers:
            await peer.close()
        await asyncio.gather(*(b.stop() for b in bots))
        telegram.stop()
        server.remove()


def table(figures: OutageFigures) -> str:
    return "\n".join(
        [
            "| processes | rate (msg/s each) | sent | archived | duplicates | outage "
            "| backlog written after restart | last message archived after restart "
            "| after the last send | alerts (down / up) | alive | leaders after |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
            f"| {figures.processes} | {figures.rate} | {figures.sent} | {figures.archived} "
            f"| {figures.duplicates} | {figures.outage_s:.1f} s | {figures.catch_up_s:.1f} s "
            f"| {figures.all_archived_s:.1f} s "
            f"| {figures.after_last_send_s:.1f} s "
            f"| {figures.down_alerts} / {figures.up_alerts} | {figures.alive} "
            f"| {figures.leaders} |",
        ]
    )
