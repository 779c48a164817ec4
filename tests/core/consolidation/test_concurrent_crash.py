"""SIGKILL the bot while batches of two chats are in flight: every cursor moved only on
an acknowledgement, and after a fresh open of the same database each killed batch is
delivered again (same range, next attempt) and then acknowledged."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from memory_core import Yuji
from memory_core.llm import ScriptedLLM
from memory_core.types import NewExperience

from .concurrent_crash_worker import ACKED_AT_ONCE, settings
from .conftest import ack_nothing

ROOT = Path(__file__).resolve().parents[3]
HUNG = ("group:1", "group:2")


async def archive(core: Yuji, scope: str, n: int) -> list[int]:
    now = core.clock.now()
    ids = await core.archive.append_many(
        [
            NewExperience(
                scope=scope,
                fingerprint=f"{scope}-{i}",
                sender_id="10001",
                sender_name="张三",
                text=f"{scope} 第{i}条：周末去爬山",
                sent_at=now - timedelta(minutes=n - i),
            )
            for i in range(n)
        ]
    )
    await core.archive.flush()
    return ids


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def start_worker(data_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.core.consolidation.concurrent_crash_worker", str(data_dir)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def wait_ready(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "ready", (line, proc.poll())


async def test_sigkill_during_concurrent_batches_moves_no_cursor_and_redelivers_each(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    core = await Yuji.open(settings(data_dir))
    last: dict[str, int] = {}
    try:
        last[ACKED_AT_ONCE] = (await archive(core, ACKED_AT_ONCE, 20))[-1]  # oldest: first
        for scope in HUNG:
            last[scope] = (await archive(core, scope, 20))[-1]
    finally:
        await core.close()
    proc = start_worker(data_dir)
    try:
        await asyncio.wait_for(asyncio.to_thread(wait_ready, proc), 120)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    db = settings(data_dir).database_path
    cursors = {
        r[0]: (r[1], r[2])
        for r in rows(db, "SELECT scope, delivered_id, acked_id FROM consolidation_cursors")
    }
    killed = rows(
        db,
        "SELECT id, scope, first_id, last_id, state FROM consolidation_batches"
        " WHERE state IN ('queued', 'delivered', 'processing') ORDER BY scope",
    )
    assert [(k[1], k[4]) for k in killed] == [(s, "processing") for s in HUNG]
    assert cursors[ACKED_AT_ONCE] == (last[ACKED_AT_ONCE], last[ACKED_AT_ONCE])  # acknowledged
    for scope in HUNG:
        assert cursors[scope] == (last[scope], 0)  # delivered, never acknowledged
    assert rows(db, "SELECT COUNT(*) FROM memories")[0][0] == 2  # the writes before the kill

    # A fresh open of the same file, no start-up reconcile: the dead owner is seen,
    # its batches are failed and delivered again.
    again = await Yuji.open(settings(data_dir), llm=ScriptedLLM(default=ack_nothing))
    try:
        reports = [await again.consolidation.run_once() for _ in range(3)]
    finally:
        await again.close()
    done = [r for r in reports if r is not None]
    assert sorted(r.scope for r in done) == list(HUNG)
    for report in done:
        (before,) = [k for k in killed if k[1] == report.scope]
        assert (report.first_id, report.last_id) == (before[2], before[3])
        assert (report.state, report.attempts) == ("done", 2)
    states = {
        (r[0], r[1]): r[2]
        for r in rows(
            db, "SELECT id, scope, state || ':' || COALESCE(error, '') FROM consolidation_batches"
        )
    }
    for batch_id, scope, *_ in killed:
        assert str(states[(batch_id, scope)]).startswith("failed:its process is gone")
    cursors = {r[0]: r[1] for r in rows(db, "SELECT scope, acked_id FROM consolidation_cursors")}
    assert cursors == last
