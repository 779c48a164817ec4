"""SQLite full: every connection capped with `PRAGMA max_page_count` just above the
file's size (what a full disk does to writes), then the cap lifted, nothing restarted.

`fill_and_heal()` serves tests/faults/test_disk_full.py and benchmarks/faults/run.py.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import event

from memory_core import FakeClock, RecordingAlertSink, Settings, Yuji
from memory_core.errors import StorageFull
from memory_core.types import NewExperience

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
OFFERED = 40


@dataclass(frozen=True)
class FullReport:
    stored_before: int
    stored_while_full: int
    refused: int
    first_error: str
    alerts: tuple[str, ...]
    integrity_while_full: str
    archived_while_full: int
    healed_id: int | None
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

    def limit_pages(dbapi_connection: Any, _record: Any) -> None:
        if cap["pages"] is not None:
            dbapi_connection.execute(f"PRAGMA max_page_count={cap['pages']}")

    event.listen(core.db.engine.sync_engine, "connect", limit_pages)
    try:
        stored = [await core.archive.append(message(i)) for i in range(5)]
        with sqlite3.connect(path) as conn:
            (pages,) = conn.execute("PRAGMA page_count").fetchone()
        cap["pages"] = pages + 3  # the disk fills up
        await core.db.engine.dispose()
        refused: list[StorageFull] = []
        for i in range(5, 5 + OFFERED):
            try:
                stored.append(await core.archive.append(message(i)))
            except StorageFull as exc:
                refused.append(exc)
        integrity_full = _integrity(path)
        with sqlite3.connect(path) as conn:
            (archived,) = conn.execute("SELECT count(*) FROM experiences").fetchone()
        cap["pages"] = None  # room again
        await core.db.engine.dispose()
        healed = await core.archive.append(message(999))
        return FullReport(
            stored_before=5,
            stored_while_full=len(stored) - 5,
            refused=len(refused),
            first_error=str(refused[0]) if refused else "",
            alerts=tuple(key for key, _ in alerts.fired),
            integrity_while_full=integrity_full,
            archived_while_full=int(archived),
            healed_id=healed,
            recoveries=tuple(key for key, _ in alerts.recovered),
            integrity_after=_integrity(path),
        )
    finally:
        await core.close()


def table(report: FullReport) -> str:
    return "\n".join(
        [
            "| offered while full | stored | refused (StorageFull) | alerts | integrity "
            "| after room returns |",
            "| --- | --- | --- | --- | --- | --- |",
            f"| {OFFERED} | {report.stored_while_full} | {report.refused} "
            f"| {', '.join(report.alerts)} (once) | {report.integrity_while_full} "
            f"| next write stored, {', '.join(report.recoveries)} recovered, "
            f"integrity {report.integrity_after} |",
        ]
    )
