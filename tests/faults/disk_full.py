"""SQLite full: every connection capped with `PRAGMA max_page_count` just above the
file's size (what a full disk does to writes), then the cap lifted, nothing restarted.
The messages offered while full wait in the archive's queue and are written once the
cap is lifted. (A real full file system: tests/faults/tmpfs_full.py.)

`fill_and_heal()` serves tests/faults/test_disk_full.py and benchmarks/faults/run.py.
"""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import event

from memory_core import FakeClock, RecordingAlertSink, Settings, Yuji
from memory_core.types import NewExperience

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
OFFERED = 40
NO_CAP = 1_073_741_823  # SQLite's default max_page_count


@dataclass(frozen=True)
class FullReport:
    stored_before: int
    held_while_full: int
    """Messages the archive's queue held while the database was full."""
    first_error: str
    alerts: tuple[str, ...]
    integrity_while_full: str
    archived_while_full: int
    archived_after: int
    distinct_after: int
    dropped: int
    recoveries: tuple[str, ...]
    integrity_after: str


def message(i: int) -> NewExperience:
    return NewExperience(
        scope="group:1",
        fingerprint=f"m{i}",
        sender_id="1",
        text=f"{i}:" + "鱼" * 2000,
        sent_at=T0 + timedelta(seconds=i),
    )


def _integrity(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


async def fill_and_heal(data_dir: Path) -> FullReport:
    alerts = RecordingAlertSink()
    core = await Yuji.open(Settings(data_dir=data_dir), clock=FakeClock(T0), alert_sink=alerts)
    path = core.settings.database_path
    cap: dict[str, int | None] = {"pages": None}

    def limit_pages(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        # On every checkout, so the cap comes and goes without closing a connection.
        dbapi_connection.execute(f"PRAGMA max_page_count={cap['pages'] or NO_CAP}")

    event.listen(core.db.engine.sync_engine, "checkout", limit_pages)
    writer = core.archive.writer
    try:
        for i in range(5):
            await core.archive.append(message(i))
        with sqlite3.connect(path) as conn:
            (pages,) = conn.execute("PRAGMA page_count").fetchone()
        cap["pages"] = pages + 3  # the disk fills up
        for i in range(5, 5 + OFFERED):
            await core.archive.enqueue(message(i))
        while writer.held_s is None or writer.depth < OFFERED - 3:  # noqa: ASYNC110
            await asyncio.sleep(0.01)  # the pages left took a few; the rest wait
        held = writer.depth
        first_error = writer.last_error
        integrity_full = _integrity(path)
        archived = _count(path)
        cap["pages"] = None  # room again
        await core.archive.flush()
        return FullReport(
            stored_before=5,
            held_while_full=held,
            first_error=first_error,
            alerts=tuple(key for key, _ in alerts.fired),
            integrity_while_full=integrity_full,
            archived_while_full=archived,
            archived_after=_count(path),
            distinct_after=_count(path, "count(DISTINCT fingerprint)"),
            dropped=writer.drops.total,
            recoveries=tuple(key for key, _ in alerts.recovered),
            integrity_after=_integrity(path),
        )
    finally:
        await core.close()


def _count(path: Path, what: str = "count(*)") -> int:
    with sqlite3.connect(path) as conn:
        (n,) = conn.execute(f"SELECT {what} FROM experiences").fetchone()
    return int(n)


def table(report: FullReport) -> str:
    return "\n".join(
        [
            "| offered while full | held in the queue | dropped | alerts | integrity "
            "| after room returns |",
            "| --- | --- | --- | --- | --- | --- |",
            f"| {OFFERED} | {report.held_while_full} | {report.dropped} "
            f"| {', '.join(report.alerts)} (once) | {report.integrity_while_full} "
            f"| {report.archived_after} archived ({report.distinct_after} distinct), "
            f"{', '.join(report.recoveries)} recovered, integrity {report.integrity_after} |",
        ]
    )
