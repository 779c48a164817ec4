"""A server that cannot be reached: `StorageUnavailable` in one line, told to the
outage alert once per outage, and said by one process of the deployment only."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core import FakeClock, RecordingAlertSink, Yuji
from memory_core.errors import StorageUnavailable
from memory_core.ops.alerts import AlertGate
from memory_core.ops.outage import STORAGE_DOWN_KEY, OutageAlerts
from memory_core.storage.engine import Database

from .test_archive import T0


async def test_an_unreachable_server_is_one_outage_until_it_answers(tmp_path: Path) -> None:
    events: list[str] = []
    db = Database(
        f"postgresql+asyncpg://postgres@/nothing?host={tmp_path}",  # no server listens here
        on_down=lambda detail: events.append(f"down: {detail}"),
        on_up=lambda: events.append("up"),
    )
    try:
        for _ in range(2):
            with pytest.raises(StorageUnavailable, match=r"^database unreachable: "):
                async with db.read():
                    pass
            with pytest.raises(StorageUnavailable):
                async with db.write():
                    pass
    finally:
        await db.dispose()
    assert len(events) == 1
    assert events[0].startswith("down: ")
    assert db.down


def test_only_the_speaking_process_alerts_and_recovers() -> None:
    spoken, quiet = RecordingAlertSink(), RecordingAlertSink()
    clock = FakeClock(T0)
    speaker = OutageAlerts(AlertGate(spoken, clock, 3600), speaks=lambda: True)
    other = OutageAlerts(AlertGate(quiet, clock, 3600), speaks=lambda: False)
    for alerts in (speaker, other):
        alerts.down("ConnectionRefusedError: [Errno 111] Connection refused")
        alerts.up()
    assert [k for k, _ in spoken.fired] == [STORAGE_DOWN_KEY]
    assert "数据库连不上了" in spoken.fired[0][1]
    assert [k for k, _ in spoken.recovered] == [STORAGE_DOWN_KEY]
    assert quiet.fired == quiet.recovered == []


@pytest.mark.sqlite_only("the file backup is SQLite's; PostgreSQL's runs pg_dump")
async def test_a_scheduled_backup_waits_while_the_database_is_full(
    core: Yuji, caplog: pytest.LogCaptureFixture
) -> None:
    core.db.full = True
    assert await core.ops.backup_if_due() is None
    assert "scheduled backup waits" in caplog.text
    assert await core.ops.backups() == []
    core.db.full = False
    assert await core.ops.backup_if_due() is not None
