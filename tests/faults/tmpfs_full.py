"""A real full disk: the bot's data folder (SQLite, backups) on a small tmpfs mounted
for the run (as root: `mount -t tmpfs`), filled with a file while messages arrive.

`disk_full()` serves tests/faults/test_tmpfs_full.py (short) and
benchmarks/faults/run_outage.py (full size): `batch` messages archived; the disk
filled; `batch` more sent; the file removed; `batch` more sent. Figures: sent,
archived, duplicates, how long the disk was full, the time from space returning to
the last message archived, the Telegram alerts, whether consolidation (a fake model
on loopback) acknowledged everything afterwards and backups ran again.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.faults.ingest_scenarios import ArchiveWatch
from tests.e2e.harness import BotProcess, OnebotPeer, query
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.telegram_server import FakeTelegramServer

GROUP = 9200
FULL_KEY = "storage-full"
FILL_CHUNK = 1 << 20


@dataclass
class DiskFullFigures:
    size_mb: int
    sent: int
    archived: int
    duplicates: int
    archived_while_full: int
    """Rows in the file when space returned, of 2 x batch sent by then."""
    full_s: float
    """The fill file written -> removed."""
    catch_up_s: float
    """Space back -> every message sent archived."""
    alerts: list[str]
    alive: bool
    acked_all: bool
    """Consolidation acknowledged every archived message afterwards."""
    backups_after: int
    """Backups made after space returned."""
    logs: str = field(default="", repr=False)

    def alert_count(self, key: str, recovered: bool) -> int:
        mark = "恢复" if recovered else "告警"
        return sum(f"[{key}]" in a and mark in a.split("\n", 1)[0] for a in self.alerts)


def acknowledging_model(body: dict[str, Any]) -> Reply | None:
    """Acknowledges every consolidation batch, of one line or forty, writing nothing."""
    messages = body.get("messages", [])
    user = str(messages[1].get("content") or "") if len(messages) > 1 else ""
    match = re.search(r"token：(\S+)", user)
    if not body.get("tools") or match is None or any(m.get("role") == "tool" for m in messages):
        return Reply.text("嗯嗯")
    summary = {"token": match.group(1), "outcome": "nothing", "summary": "闲聊"}
    return Reply.tools(("acknowledge", summary))


def can_mount() -> bool:
    return os.geteuid() == 0


@contextlib.contextmanager
def tmpfs(path: Path, size_mb: int) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0755", "tmpfs", str(path)],
        check=True,
        capture_output=True,
    )
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True)


def fill(path: Path) -> int:
    """Write zeros until the file system refuses (ENOSPC); the bytes written."""
    written = 0
    chunk = b"\0" * FILL_CHUNK
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        while len(chunk) >= 512:
            try:
                written += os.write(fd, chunk)
            except OSError:
                chunk = chunk[: len(chunk) // 2]
    finally:
        os.close(fd)
    return written


async def send(peer: OnebotPeer, first: int, count: int, rate: int) -> None:
    base = int(time.time())
    t0 = time.monotonic()
    for j, i in enumerate(range(first, first + count)):
        delay = t0 + j / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        await peer.send_event(
            peer.group_message(
                f"第{i}条：周末去不去爬山？",
                group_id=GROUP,
                message_id=2_000_000 + i,
                user_id=40_000 + i % 5,
                nickname=f"山友{i % 5}",
                time_=base + j // 50,
            )
        )


def _acked_all(database: Path) -> bool:
    rows = query(
        database,
        "SELECT (SELECT max(id) FROM experiences),"
        " (SELECT max(acked_id) FROM consolidation_cursors)",
    )
    return bool(rows) and rows[0][0] is not None and rows[0][0] == rows[0][1]


async def disk_full(
    tmp: Path,
    *,
    size_mb: int = 64,
    batch: int = 300,
    rate: int = 200,
    settle_s: float = 120.0,
    backups: bool = False,
) -> DiskFullFigures:
    """`backups`: also wait for a scheduled backup after space returned (a minute)."""
    telegram = FakeTelegramServer().start()
    model = FakeOpenAIServer().start()
    model.handler = acknowledging_model
    env = {
        **telegram.env(),
        **model.env(api_key="sk-e2e"),
        "YUJI_VECTOR_MODE": "off",
        "YUJI_BACKFILL_INTERVAL_S": "0",
        "YUJI_CONSOLIDATION_TICK_S": "1",
        "YUJI_ELIGIBLE_MAX_WAIT_S": "1",
        "YUJI_BACKUP_INTERVAL_S": "5",
        "YUJI_ALERT_DEDUP_S": "3600",
    }
    bot = BotProcess(tmp, env=env)
    try:
        with tmpfs(bot.data_dir, size_mb):
            await bot.start()
            watch = ArchiveWatch(bot.database, interval_s=0.1)
            async with bot.peer() as peer:
                await send(peer, 0, batch, rate)
                await _wait(lambda: _count(watch) >= batch, settle_s)
                filler = bot.data_dir / "filler"
                # An empty WAL first, so the next write needs new blocks (SQLite reuses a
                # WAL's pages, and a write that fits in them passes on a full disk).
                await asyncio.to_thread(_truncate_wal, bot.database)
                await asyncio.to_thread(fill, filler)
                full_at = time.monotonic()
                await send(peer, batch, batch, rate)
                # The disk is full for the writer: the store-full alert came.
                await _wait(lambda: any(f"[{FULL_KEY}]" in m.text for m in telegram.messages), 60)
                await asyncio.sleep(2.0)  # a backup tick and a consolidation pass meanwhile
                archived_while_full = _count(watch)
                backups_while_full = _backups(bot.data_dir)
                filler.unlink()
                back = time.monotonic()
                await send(peer, 2 * batch, batch, rate)
                await _wait(lambda: _count(watch) >= 3 * batch, settle_s)
                done = time.monotonic()
                await _wait(lambda: _acked_all(bot.database), settle_s)
                await _wait(lambda: _recovered(telegram), 60)
                if backups:
                    await _wait(lambda: _backups(bot.data_dir) > backups_while_full, 120)
                backups_after = _backups(bot.data_dir) - backups_while_full
            alive = bot.running
            total, distinct = _totals(bot.database)
            acked = _acked_all(bot.database)
            await bot.stop()
    finally:
        await bot.stop()
        telegram.stop()
        model.stop()
    return DiskFullFigures(
        size_mb=size_mb,
        sent=3 * batch,
        archived=distinct,
        duplicates=total - distinct,
        archived_while_full=archived_while_full,
        full_s=back - full_at,
        catch_up_s=done - back,
        alerts=[m.text for m in telegram.messages],
        alive=alive,
        acked_all=acked,
        backups_after=backups_after,
        logs=bot.log_text(),
    )


def _truncate_wal(database: Path) -> None:
    with contextlib.closing(sqlite3.connect(database, timeout=30)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()


def _count(watch: ArchiveWatch) -> int:
    rows = query(watch.database, "SELECT count(DISTINCT fingerprint) FROM experiences")
    return int(rows[0][0]) if rows else 0


def _totals(database: Path) -> tuple[int, int]:
    [(total, distinct)] = query(
        database, "SELECT count(*), count(DISTINCT fingerprint) FROM experiences"
    )
    return int(total), int(distinct)


def _backups(data_dir: Path) -> int:
    folder = data_dir / "backups"
    return sum(1 for p in folder.glob("*.json")) if folder.is_dir() else 0


def _recovered(telegram: FakeTelegramServer) -> bool:
    return any(f"[{FULL_KEY}]" in m.text and "恢复" in m.text for m in telegram.messages)


async def _wait(predicate: object, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {timeout_s}s")
        await asyncio.sleep(0.2)


def table(figures: DiskFullFigures) -> str:
    return "\n".join(
        [
            "| tmpfs | sent | archived | duplicates | archived while full | full for "
            "| all archived after space returned | alerts (full / recovered) | alive "
            "| consolidation caught up | backups after |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
            f"| {figures.size_mb} MB | {figures.sent} | {figures.archived} "
            f"| {figures.duplicates} | {figures.archived_while_full} of {2 * figures.sent // 3} "
            f"| {figures.full_s:.1f} s | {figures.catch_up_s:.1f} s "
            f"| {figures.alert_count(FULL_KEY, False)} / {figures.alert_count(FULL_KEY, True)} "
            f"| {figures.alive} | {figures.acked_all} | {figures.backups_after} |",
        ]
    )
