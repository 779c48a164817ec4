"""SIGKILL a process in the middle of consolidation, many times: after restart and
reconciliation `acked` never points past an unacknowledged experience, none is
skipped, every extracted batch has its fragment, and the database is intact."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from memory_core import Yuji
from memory_core.types import NewExperience

from .crash_worker import settings

ROOT = Path(__file__).resolve().parents[3]
TRIALS = 26
SCOPES = ("group:1", "group:2", "private:3")


def check_invariants(db_path: Path, *, after_reconcile: bool) -> dict[str, int]:
    con = sqlite3.connect(db_path)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        acked_by_scope: dict[str, int] = {}
        for scope, acked, delivered in con.execute(
            "SELECT scope, acked_id, delivered_id FROM consolidation_cursors"
        ).fetchall():
            done = con.execute(
                "SELECT id, first_id, last_id, outcome FROM consolidation_batches"
                " WHERE scope = ? AND state = 'done' ORDER BY first_id",
                (scope,),
            ).fetchall()
            # acked moves only with an acknowledged batch, even before any repair
            assert acked == max((d[2] for d in done), default=0)
            exp_ids = [
                r[0]
                for r in con.execute(
                    "SELECT id FROM experiences WHERE scope = ? ORDER BY id", (scope,)
                ).fetchall()
            ]
            # done batches tile the scope's experiences from the start, no gap, no overlap
            position = 0
            for batch_id, first, last, outcome in done:
                assert exp_ids[position] == first, (scope, batch_id, first)
                while position < len(exp_ids) and exp_ids[position] <= last:
                    position += 1
                if outcome == "extracted":
                    fragments = con.execute(
                        "SELECT COUNT(*) FROM fragments WHERE batch_id = ?", (batch_id,)
                    ).fetchone()[0]
                    assert fragments == 1
            assert all(i > acked for i in exp_ids[position:])
            if after_reconcile:
                assert delivered == acked
            acked_by_scope[scope] = acked
        if after_reconcile:
            open_batches = con.execute(
                "SELECT COUNT(*) FROM consolidation_batches"
                " WHERE state IN ('queued', 'delivered', 'processing')"
            ).fetchone()[0]
            assert open_batches == 0
        return acked_by_scope
    finally:
        con.close()


async def archive_more(core: Yuji, rng: random.Random, start: int, n: int) -> None:
    await core.archive.append_many(
        [
            NewExperience(
                scope=rng.choice(SCOPES),
                fingerprint=f"m{start + i}",
                sender_id=str(rng.randint(1, 5)),
                text="消息" * rng.randint(1, 30),
                sent_at=datetime.now(UTC),
                is_bot=rng.random() < 0.1,
            )
            for i in range(n)
        ]
    )
    await core.archive.flush()


def read_line(proc: subprocess.Popen[str], timeout_s: float = 60.0) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout_s
    line = proc.stdout.readline()
    assert time.monotonic() < deadline, "worker did not answer in time"
    assert line, f"zygote exited: {proc.poll()}"
    return line.strip()


def start_zygote(data_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.core.consolidation.crash_worker", str(data_dir)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def next_started(proc: subprocess.Popen[str]) -> int:
    """Skip the previous worker's `finished` line (it may have beaten the kill)."""
    while True:
        line = read_line(proc)
        assert not line.startswith("crashed"), line
        if line.startswith("started "):
            return int(line.split()[1])


def wait_dead(pid: int) -> None:
    for _ in range(2000):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.005)
    raise AssertionError(f"worker {pid} did not die")


async def test_sigkill_at_random_points_never_skips_or_fakes_an_ack(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    rng = random.Random(20261120)
    core = await Yuji.open(settings(data_dir))  # the "restarted" process, between trials
    await archive_more(core, rng, 0, 60)
    zygote = start_zygote(data_dir)
    killed = finished = 0
    try:
        assert await asyncio.to_thread(read_line, zygote) == "zygote-ready"
        next_fingerprint = 60
        for trial in range(TRIALS):
            assert zygote.stdin is not None
            zygote.stdin.write(f"go {trial}\n")
            zygote.stdin.flush()
            pid = await asyncio.to_thread(next_started, zygote)
            await asyncio.sleep(rng.uniform(0.01, 0.4))
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                finished += 1
            await asyncio.to_thread(wait_dead, pid)
            db = settings(data_dir).database_path
            check_invariants(db, after_reconcile=False)
            await core.consolidation.reconcile()
            check_invariants(db, after_reconcile=True)
            await archive_more(core, rng, next_fingerprint, 20)
            next_fingerprint += 20

        # Finally let one worker run to the end: everything gets acknowledged.
        assert zygote.stdin is not None
        zygote.stdin.write("go 999\n")
        zygote.stdin.flush()
        pid = await asyncio.to_thread(next_started, zygote)
        end = await asyncio.to_thread(read_line, zygote, 120.0)
        assert end == f"finished {pid}"
        await asyncio.to_thread(wait_dead, pid)
    finally:
        await core.close()
        zygote.kill()
        zygote.wait()
        for pipe in (zygote.stdin, zygote.stdout):
            if pipe is not None:
                pipe.close()
    db = settings(data_dir).database_path
    acked = check_invariants(db, after_reconcile=True)
    con = sqlite3.connect(db)
    try:
        last = dict(con.execute("SELECT scope, MAX(id) FROM experiences GROUP BY scope").fetchall())
        batches = dict(
            con.execute(
                "SELECT state, COUNT(*) FROM consolidation_batches GROUP BY state"
            ).fetchall()
        )
    finally:
        con.close()
    assert acked == last
    assert killed >= 20, (killed, finished)  # at least 20 trials really died mid-flight
    assert batches.get("failed", 0) > 0
    assert batches.get("done", 0) > 0
