"""The kill suite: SIGKILL a workload at a random moment, restart, check.

Each cycle starts `tests.faults.worker` on one workload (archiving, a consolidation
batch against a fake model on loopback, the nightly run, a backup while archiving),
waits for READY, kills it with SIGKILL after a random delay, and then checks:

1. `PRAGMA integrity_check` of the file as the kill left it;
2. for every chat, acknowledged <= delivered <= archived (the highest message id);
3. a restart (open the core, the start-up `reconcile` the bot runs), the watermark
   order again, and the newest 3,000 archived messages resent: not one new row.

`run_kills(n)` serves the short pytest form and `benchmarks/faults/run.py`.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import signal
import sqlite3
import statistics
import sys
import time
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_core import Settings, Yuji
from memory_core.types import NewExperience
from tests.core.nightly.seed import fragment, prompt_kind, sh
from tests.fakes.openai_server import FakeOpenAIServer, Reply

from .worker import WORKLOADS

ROOT = Path(__file__).resolve().parents[2]
NIGHTLY_SCOPES = ("group:100", "group:101")
RESEND = 3000
"""The newest messages resent after each kill (those the killed worker was writing)."""


@dataclass
class Cycle:
    workload: str
    delay_s: float
    integrity_ok: bool
    order_ok: bool
    order_ok_after_restart: bool
    resent: int
    duplicates: int
    recovery_s: float
    problems: list[str] = field(default_factory=list[str])

    @property
    def ok(self) -> bool:
        return (
            self.integrity_ok
            and self.order_ok
            and self.order_ok_after_restart
            and self.duplicates == 0
        )


def model(body: dict[str, Any]) -> Reply:
    """A slow-ish model: consolidation acknowledges, each nightly prompt gets a valid answer."""
    messages = body["messages"]
    if body.get("tools"):
        token = str(messages[1]["content"]).split("token：", 1)[1].split("\n", 1)[0]
        return Reply(
            tool_calls=(
                (
                    "acknowledge",
                    json.dumps({"token": token, "outcome": "extracted", "summary": "鱼塘闲聊"}),
                ),
            ),
            delay_s=0.2,
        )
    kind = prompt_kind(str(messages[0]["content"]))
    ids = [int(i) for i in re.findall(r"\[碎片 (\d+)\]", str(messages[1]["content"]))]
    payload: dict[str, Any] = {
        "diary": {"diary": "大家聊鱼塘的水温。"},
        "cards": {"changes": [{"kind": "preferences", "action": "add", "text": "爱聊鱼塘"}]},
        "states": {"changes": []},
        "events": {
            "events": [
                {
                    "subject": "成员1",
                    "content": "聊鱼塘水温",
                    "importance": 0.5,
                    "fragment_ids": ids,
                }
            ]
            if ids
            else []
        },
        "settle": {"rewrites": []},
    }[kind]
    return Reply(content=json.dumps(payload, ensure_ascii=False), delay_s=0.05)


@contextmanager
def fake_model() -> Generator[FakeOpenAIServer]:
    server = FakeOpenAIServer()
    server.handler = model
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def seed(data_dir: Path) -> None:
    """Two chats with a fortnight of acknowledged chat for the nightly run."""
    core = await Yuji.open(Settings(data_dir=data_dir))
    try:
        for scope in NIGHTLY_SCOPES:
            for day in range(1, 15):
                await fragment(core, scope, sh(2026, 11, day, 20, 0), "聊鱼塘", ["水凉", "真凉"])
    finally:
        await core.close()


def integrity(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        rows = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    return [] if rows == ["ok"] else rows


def order_problems(path: Path) -> list[str]:
    """Every chat: acked <= delivered <= the highest archived id of that chat."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT c.scope, c.acked_id, c.delivered_id, "
            "(SELECT max(id) FROM experiences e WHERE e.scope = c.scope) "
            "FROM consolidation_cursors c"
        ).fetchall()
    return [
        f"{scope}: acked {acked} delivered {delivered} archived {top}"
        for scope, acked, delivered, top in rows
        if not acked <= delivered <= (top or 0)
    ]


async def restart_and_resend(data_dir: Path) -> tuple[list[str], int, int]:
    """Open as the bot does (with its start-up reconcile), resend the newest archived
    messages; returns the order problems after restart, messages resent, new rows."""
    core = await Yuji.open(Settings(data_dir=data_dir))
    try:
        await core.consolidation.reconcile()
        problems = order_problems(core.settings.database_path)
        with sqlite3.connect(core.settings.database_path) as conn:
            rows = conn.execute(
                "SELECT scope, fingerprint, sender_id, text, sent_at FROM experiences "
                "ORDER BY id DESC LIMIT ?",
                (RESEND,),
            ).fetchall()
            (before,) = conn.execute("SELECT count(*) FROM experiences").fetchone()
        again = [
            NewExperience(scope=s, fingerprint=f, sender_id=u, text=t, sent_at=_instant(at))
            for s, f, u, t, at in rows
        ]
        for start in range(0, len(again), 500):
            await core.archive.append_many(again[start : start + 500])
        await core.archive.flush()
        with sqlite3.connect(core.settings.database_path) as conn:
            (after,) = conn.execute("SELECT count(*) FROM experiences").fetchone()
            (dupes,) = conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM experiences "
                "GROUP BY scope, fingerprint HAVING count(*) > 1)"
            ).fetchone()
        return problems, len(rows), int(after) - int(before) + int(dupes)
    finally:
        await core.close()


def _instant(text: str) -> Any:
    from datetime import UTC, datetime

    value = datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


async def one_cycle(
    data_dir: Path, server: FakeOpenAIServer, workload: str, delay_s: float, seed_n: int
) -> Cycle:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YUJI_", "ONEBOT_"))}
    env.update(server.env())
    env.update({"YUJI_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1"})
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.faults.worker",
        workload,
        str(seed_n),
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 120)
    if line.strip() != b"READY":
        proc.kill()
        await proc.wait()
        raise RuntimeError(f"worker {workload} did not start: {line!r}")
    await asyncio.sleep(delay_s)
    exited_early = proc.returncode is not None
    proc.send_signal(signal.SIGKILL)
    await proc.wait()
    started = time.monotonic()
    path = data_dir / "yuji.db"
    broken = integrity(path)
    order = order_problems(path)
    after_restart, resent, extra = await restart_and_resend(data_dir)
    early = ["the worker exited before the kill"] if exited_early else []
    return Cycle(
        workload=workload,
        delay_s=delay_s,
        integrity_ok=not broken,
        order_ok=not order,
        order_ok_after_restart=not after_restart,
        resent=resent,
        duplicates=extra,
        recovery_s=time.monotonic() - started,
        problems=broken + order + after_restart + early,
    )


async def run_kills(
    data_dir: Path, kills: int, *, seed: int = 17, max_delay_s: float = 2.5
) -> list[Cycle]:
    """`kills` cycles, the workloads in turn, each killed after a random delay."""
    rng = random.Random(seed)
    await seed_database(data_dir)
    cycles: list[Cycle] = []
    with fake_model() as server:
        for n in range(kills):
            workload = WORKLOADS[n % len(WORKLOADS)]
            delay = round(rng.uniform(0.2, max_delay_s), 2)
            cycles.append(await one_cycle(data_dir, server, workload, delay, n))
    return cycles


async def seed_database(data_dir: Path) -> None:
    if not (data_dir / "yuji.db").exists():
        await seed(data_dir)


def table(cycles: list[Cycle]) -> str:
    lines = [
        "| workload | kills | integrity ok | ack <= delivered <= archived | after restart "
        "| messages resent | duplicates | recovery p50 |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for workload in WORKLOADS:
        mine = [c for c in cycles if c.workload == workload]
        if not mine:
            continue
        lines.append(
            f"| {workload} | {len(mine)} | {sum(c.integrity_ok for c in mine)}/{len(mine)} "
            f"| {sum(c.order_ok for c in mine)}/{len(mine)} "
            f"| {sum(c.order_ok_after_restart for c in mine)}/{len(mine)} "
            f"| {sum(c.resent for c in mine):,} | {sum(c.duplicates for c in mine)} "
            f"| {statistics.median(c.recovery_s for c in mine):.1f} s |"
        )
    return "\n".join(lines)
