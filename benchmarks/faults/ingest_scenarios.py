"""Ingest fault scenarios through the real bot (`bot.py`) and a NapCat-like client on
loopback. The full runs (`run_ingest.py`) and the short CI form
(`tests/e2e/test_ingest_faults.py`) call the same functions with different sizes.

- `flood`: a burst at full speed, then a paced rate; archived counts, the burst's
  drain time, receipt -> archived latency, peak RSS of the bot process.
- `fuzz`: malformed frames and events of every kind interleaved with valid messages;
  the client keeps its history and answers `get_group_msg_history`, so a reconnect's
  catch-up backfill counts (the client never resends); valid archived, bot alive,
  log size.
- `sigterm`: a backlog sent, SIGTERM right after; archived count and exit status.

Latency: a watcher polls the bot's SQLite file every 20 ms and records when each row
first appears. "receipt -> archived" is that instant minus the row's `received_at`
(the bot's clock when it read the frame, same host clock); "sent -> archived" starts
when the client's send returned, so it includes any time the bot left the frame
unread (backpressure).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import sqlite3
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.e2e.harness import BotProcess, OnebotPeer, count_rows

GROUPS = tuple(range(7001, 7021))
VALID_ID0 = 10_000_000
FUZZ_ID0 = 50_000_000


def peak_rss_mb(pid: int) -> float:
    """VmHWM: the largest resident set the process has had."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class ArchiveWatch:
    """When each fingerprint first appears in the bot's database (polled)."""

    def __init__(self, database: Path, interval_s: float = 0.02) -> None:
        self.database = database
        self.interval_s = interval_s
        self.seen: dict[str, float] = {}
        self.received: dict[str, float] = {}
        self._last_id = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await asyncio.to_thread(self.poll)

    async def _run(self) -> None:
        while True:
            await asyncio.to_thread(self.poll)
            await asyncio.sleep(self.interval_s)

    def poll(self) -> None:
        if not self.database.exists():
            return
        conn = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True, timeout=10)
        try:
            rows = conn.execute(
                "SELECT id, fingerprint, received_at FROM experiences WHERE id > ? ORDER BY id",
                (self._last_id,),
            ).fetchall()
        except sqlite3.OperationalError:
            return
        finally:
            conn.close()
        now = time.time()
        for row_id, fingerprint, received_at in rows:
            self._last_id = max(self._last_id, int(row_id))
            self.seen.setdefault(str(fingerprint), now)
            stamp = datetime.fromisoformat(str(received_at)).replace(tzinfo=UTC)
            self.received.setdefault(str(fingerprint), stamp.timestamp())

    async def wait_for(self, fingerprints: set[str], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not fingerprints <= self.seen.keys():
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.05)
        return True


def text_event(peer: OnebotPeer, i: int, id0: int = VALID_ID0) -> dict[str, Any]:
    return peer.group_message(
        f"第{i}条：今天的鱼很好吃，明天去爬山吗？",
        group_id=GROUPS[i % len(GROUPS)],
        message_id=id0 + i,
        user_id=20_000 + i % 50,
        nickname=f"群友{i % 50}",
    )


# --- flood --------------------------------------------------------------------------


@dataclass
class FloodFigures:
    burst: int
    burst_archived: int
    burst_drain_s: float
    """First burst send -> last burst row committed."""
    rate: int
    seconds: float
    paced: int
    paced_archived: int
    p50_s: float
    p99_s: float
    max_s: float
    sent_p99_s: float
    peak_rss_mb: float
    exit_code: int | None
    log_bytes: int


async def flood(tmp: Path, *, burst: int, rate: int, seconds: float) -> FloodFigures:
    bot = BotProcess(tmp)
    await bot.start()
    try:
        async with bot.peer() as peer:
            watch = ArchiveWatch(bot.database)
            watch.start()
            start = time.time()
            for i in range(burst):
                await peer.send_event(text_event(peer, i))
            burst_ids = {str(VALID_ID0 + i) for i in range(burst)}
            await watch.wait_for(burst_ids, timeout_s=max(60.0, burst / 50))
            burst_done = max((watch.seen[f] for f in burst_ids if f in watch.seen), default=start)

            sent_at: dict[str, float] = {}
            total = int(rate * seconds)
            t0 = time.monotonic()
            for j in range(total):
                delay = t0 + j / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                event = text_event(peer, burst + j)
                await peer.send_event(event)
                sent_at[str(event["message_id"])] = time.time()
            await watch.wait_for(set(sent_at), timeout_s=120)
            await watch.stop()
        pid = bot.pid
        rss = peak_rss_mb(pid) if pid else float("nan")
    finally:
        code = await bot.stop(signal.SIGTERM)
    latencies = [watch.seen[f] - watch.received[f] for f in sent_at if f in watch.seen]
    sent_latencies = [watch.seen[f] - sent_at[f] for f in sent_at if f in watch.seen]
    return FloodFigures(
        burst=burst,
        burst_archived=len(burst_ids & watch.seen.keys()),
        burst_drain_s=burst_done - start,
        rate=rate,
        seconds=seconds,
        paced=len(sent_at),
        paced_archived=len(set(sent_at) & watch.seen.keys()),
        p50_s=statistics.median(latencies) if latencies else float("nan"),
        p99_s=percentile(latencies, 0.99),
        max_s=max(latencies, default=float("nan")),
        sent_p99_s=percentile(sent_latencies, 0.99),
        peak_rss_mb=rss,
        exit_code=code,
        log_bytes=bot.log_path.stat().st_size,
    )


# --- SIGTERM with a backlog -----------------------------------------------------------


@dataclass
class SigtermFigures:
    sent: int
    archived: int
    exit_code: int | None
    stop_s: float


async def sigterm(tmp: Path, *, messages: int) -> SigtermFigures:
    bot = BotProcess(tmp)
    await bot.start()
    async with bot.peer() as peer:
        for i in range(messages):
            await peer.send_event(text_event(peer, i))
        start = time.monotonic()
        code = await bot.stop(signal.SIGTERM, timeout_s=120)
        stop_s = time.monotonic() - start
    return SigtermFigures(messages, count_rows(bot.data_dir, "experiences"), code, stop_s)


# --- fuzz -----------------------------------------------------------------------------


class History:
    """The client's own record of the valid messages, served like NapCat serves it."""

    def __init__(self) -> None:
        self.by_group: dict[int, list[dict[str, Any]]] = {}

    def add(self, event: dict[str, Any]) -> None:
        self.by_group.setdefault(int(event["group_id"]), []).append(event)

    def handler(self, peer: OnebotPeer) -> Callable[[str, dict[str, Any]], Any]:
        def handle(action: str, params: dict[str, Any]) -> Any:
            if action == "get_group_list":
                return [{"group_id": g, "group_name": f"群{g}"} for g in self.by_group]
            if action == "get_group_msg_history":
                items = self.by_group.get(int(params.get("group_id", 0)), [])
                anchor = params.get("message_seq")
                if anchor is not None:
                    items = [m for m in items if m["message_id"] <= int(anchor)]
                return {"messages": items[-int(params.get("count", 20)) :]}
            return peer.default_handler(action, params)

        return handle


def fuzz_frames(peer: OnebotPeer, rng: random.Random, i: int) -> str:
    """One malformed frame or odd event (JSON text, as a client would put it on the wire)."""
    base = text_event(peer, i, FUZZ_ID0)
    kind = rng.randrange(14)
    if kind == 0:  # not JSON at all
        return rng.choice(["not json {", "", "\x00\x01\x02", "[1,2", json.dumps(base)[:-7]])
    if kind == 1:  # JSON, not an object
        return rng.choice(["[]", "1", '"text"', "null", "true", "[{}]"])
    if kind == 2:  # wrong types
        key = rng.choice(["message_id", "group_id", "user_id", "time", "sender", "message"])
        base[key] = rng.choice([{"a": 1}, [1, 2], True, "abc", -1, 1e308, None, "9" * 80])
        return json.dumps(base)
    if kind == 3:  # missing fields
        for key in rng.sample(sorted(base), rng.randrange(1, 5)):
            del base[key]
        return json.dumps(base)
    if kind == 4 and rng.random() < 0.2:  # huge text (up to 1.2 MB of UTF-8)
        base["message"] = [
            {"type": "text", "data": {"text": "鱼" * rng.randrange(10**4, 4 * 10**5)}}
        ]
        return json.dumps(base, ensure_ascii=False)
    if kind == 5 and rng.random() < 0.2:  # very many segments
        base["message"] = [{"type": "text", "data": {"text": "x"}}] * 20_000
        return json.dumps(base)
    if kind == 6:  # nested deeper than anything sane
        levels = rng.choice([100, 600, 3000, 20_000])
        deep = '{"d":' * levels + "1" + "}" * levels
        head = json.dumps(base)[:-1]
        return head + ', "extra": ' + deep + "}"
    if kind == 7:  # lone surrogates and NUL
        base["message"] = [{"type": "text", "data": {"text": "半\ud83d个\x00表情\udc00"}}]
        base["sender"]["card"] = "\ud800\x00"
        return json.dumps(base)
    if kind == 8:  # CQ-code look-alikes, as text and as a broken CQ string
        base["message"] = rng.choice(
            [
                "[CQ:at,qq=all][CQ:face,id=abc",
                "[CQ:image,file=http://127.0.0.1:1/x.png]",
                "&#91;CQ:at,qq=1&#93;[CQ:]",
            ]
        )
        base["message_format"] = "string"
        return json.dumps(base)
    if kind == 9:  # segments of odd shapes
        base["message"] = rng.choice(
            [[1, 2], [{"type": 5}], [{"data": "x"}], {"type": "text"}, [None], [[]]]
        )
        return json.dumps(base)
    if kind == 10:  # unknown post types and notices
        return json.dumps(
            {"post_type": rng.choice(["notice", "request", "weird", 5]), "self_id": peer.self_id}
        )
    if kind == 11:  # an API answer nobody asked for
        return json.dumps({"status": "ok", "retcode": 0, "data": None, "echo": rng.randrange(9)})
    if kind == 12:  # a private message with wrong ids
        return json.dumps({**base, "message_type": "private", "user_id": "x" * 100})
    return json.dumps({**base, "message_type": rng.choice(["group", "private", "guild", None])})


@dataclass
class FuzzFigures:
    fuzzed: int
    valid: int
    valid_archived: int
    reconnects: int
    alive: bool
    log_bytes: int
    seconds: float
    oversized: int
    unarchived: list[str] = field(default_factory=list[str])


async def fuzz(
    tmp: Path, *, fuzzed: int, valid_every: int = 5, seed: int = 17, oversized: int = 1
) -> FuzzFigures:
    """`fuzzed` bad frames with a valid message after every `valid_every`; `oversized`
    frames bigger than the server's 16 MiB limit force socket closes."""
    rng = random.Random(seed)
    history = History()
    bot = BotProcess(tmp)
    await bot.start()
    start = time.monotonic()
    valid_ids: set[str] = set()
    reconnects = 0
    oversized_at = set(rng.sample(range(fuzzed), min(oversized, fuzzed)))
    peer = await _connect(bot, history)
    watch = ArchiveWatch(bot.database)
    watch.start()
    try:
        n_valid = 0
        for i, step in enumerate(_schedule(fuzzed, valid_every)):
            if step == "valid":
                event = text_event(peer, n_valid)
                n_valid += 1
                history.add(event)
                valid_ids.add(str(event["message_id"]))
                frame = json.dumps(event, ensure_ascii=False)
            elif i in oversized_at:
                frame = json.dumps(text_event(peer, i, FUZZ_ID0) | {"pad": "x" * (17 << 20)})
            else:
                frame = fuzz_frames(peer, rng, i)
            sent = await _send(peer, frame)
            if sent and i in oversized_at:
                # The server refuses a frame over its size limit by closing the socket;
                # a client sees that (here: waits for it) and reconnects, as NapCat does.
                await _wait_closed(peer, 10.0)
                sent = False
            if not sent:
                reconnects += 1
                await peer.close()
                peer = await _connect(bot, history)
        # After everything, a fresh valid message on a live socket still reaches the
        # archive (a socket the server closed is noticed here at the latest).
        await asyncio.sleep(1.0)
        if not peer.connected:
            reconnects += 1
            await peer.close()
            peer = await _connect(bot, history)
        last = text_event(peer, n_valid)
        history.add(last)
        await peer.send_event(last)
        await watch.wait_for({*valid_ids, str(last["message_id"])}, timeout_s=120)
        await watch.stop()
        alive = bot.running and str(last["message_id"]) in watch.seen
    finally:
        await peer.close()
        await bot.stop(signal.SIGTERM)
    missing = sorted(valid_ids - watch.seen.keys())
    return FuzzFigures(
        fuzzed=fuzzed,
        valid=len(valid_ids),
        valid_archived=len(valid_ids) - len(missing),
        reconnects=reconnects,
        alive=alive,
        log_bytes=bot.log_path.stat().st_size,
        seconds=time.monotonic() - start,
        oversized=len(oversized_at),
        unarchived=missing[:20],
    )


def _schedule(fuzzed: int, valid_every: int) -> Iterator[str]:
    for i in range(fuzzed):
        yield "fuzz"
        if (i + 1) % valid_every == 0:
            yield "valid"


async def _connect(bot: BotProcess, history: History) -> OnebotPeer:
    for _ in range(100):
        peer = bot.peer()
        peer.handler = history.handler(peer)
        try:
            return await peer.connect()
        except Exception:
            await asyncio.sleep(0.1)  # the old connection is still being cleaned up
    raise RuntimeError("could not reconnect to the bot")


async def _wait_closed(peer: OnebotPeer, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while peer.connected and time.monotonic() < deadline:  # noqa: ASYNC110 (polls the peer)
        await asyncio.sleep(0.05)


async def _send(peer: OnebotPeer, frame: str) -> bool:
    if not peer.connected:
        return False
    try:
        await peer.send_raw(frame)
    except Exception:
        return False
    return True
