"""Verified backups: consistency under concurrent writes, every check, failure alerts,
retention on disk, the mirror, and the manifest."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from memory_core import FakeClock, Settings, Yuji
from memory_core.errors import StorageError
from memory_core.ops.alerts import RecordingAlertSink
from memory_core.ops.backup import count_shortfalls, restore_drill, verify_backup
from memory_core.ops.manifest import BackupManifest, list_manifests, sha256_file
from memory_core.ops.orphans import find_orphans
from memory_core.ops.service import OpsService, backup_due
from memory_core.storage.ops import ops_repo
from memory_core.storage.schema import TRUTH_TABLES
from tests.core.ops_helpers import add_experiences, scramble_pages

pytestmark = pytest.mark.sqlite_only(
    "backups of a SQLite file (PostgreSQL's are pg_dump's: test_pg_backup.py)"
)

BATCH = 7
"""Rows per write transaction in the concurrent-writer test."""


@pytest.fixture
def alerts() -> RecordingAlertSink:
    return RecordingAlertSink()


@pytest.fixture
async def opened(
    settings: Settings, clock: FakeClock, alerts: RecordingAlertSink
) -> AsyncIterator[Yuji]:
    core = await Yuji.open(settings, clock=clock, alert_sink=alerts)
    try:
        yield core
    finally:
        await core.close()


def live_count(core: Yuji) -> int:
    return ops_repo.count_rows(core.settings.database_path, ["experiences"])["experiences"]


async def test_backup_under_concurrent_writes_is_consistent_and_passes_every_check(
    opened: Yuji,
) -> None:
    await add_experiences(opened.db, 500)
    written = threading.Semaphore(0)
    stop = asyncio.Event()

    async def writer() -> None:
        while not stop.is_set():
            await add_experiences(opened.db, BATCH)
            written.release()
            await asyncio.sleep(0)

    def snapshot_amid_writes(source: Path, target: Path, tables: Sequence[str]) -> dict[str, int]:
        for _ in range(20):  # writes land before the snapshot...
            assert written.acquire(timeout=30)
        counts = ops_repo.online_backup(source, target, tables)
        for _ in range(20):  # ...and after it, while the checks are still to come
            assert written.acquire(timeout=30)
        return counts

    ops = OpsService(
        opened.db, opened.settings, opened.clock, opened.alerts, snapshot=snapshot_amid_writes
    )
    task = asyncio.create_task(writer())
    manifest = await ops.backup(reason="test")
    stop.set()
    await task

    assert manifest.ok, manifest.failed_checks
    assert [c.name for c in manifest.checks] == [
        "snapshot",
        "sha256",
        "integrity",
        "counts",
        "drill",
    ]
    snap = manifest.live_counts["experiences"]
    assert snap >= 500 + 20 * BATCH
    assert (snap - 500) % BATCH == 0  # whole transactions only: a consistent snapshot
    assert manifest.backup_counts == manifest.live_counts
    assert live_count(opened) >= snap + 20 * BATCH  # writers went on after the snapshot
    backup = opened.settings.backups_dir / manifest.file
    assert ops_repo.integrity_problems(backup) == []
    assert sha256_file(backup) == manifest.sha256
    assert manifest.schema_revision is not None
    assert not backup.with_name(backup.name + "-wal").exists()  # one self-contained file


async def test_a_corrupted_backup_is_detected_by_the_drill(opened: Yuji) -> None:
    await add_experiences(opened.db, 300)
    manifest = await opened.ops.backup()
    assert manifest.ok
    backup = opened.settings.backups_dir / manifest.file

    check, _ = restore_drill(backup, expected=manifest.backup_counts, sha256=manifest.sha256)
    assert check.ok, check.detail

    scramble_pages(backup)
    check, _ = restore_drill(backup, expected=manifest.backup_counts, sha256=None)
    assert not check.ok
    header_gone = opened.settings.backups_dir / "header.db"
    header_gone.write_bytes(b"\0" * 100 + backup.read_bytes()[100:])
    check, _ = restore_drill(header_gone, expected=None, sha256=None)
    assert not check.ok

    checks, _ = verify_backup(backup)
    failed = {c.name for c in checks if not c.ok}
    assert {"sha256", "drill"} <= failed


async def test_a_failed_check_marks_the_backup_failed_and_alerts_then_recovers(
    opened: Yuji, alerts: RecordingAlertSink, clock: FakeClock
) -> None:
    await add_experiences(opened.db, 200)

    def corrupting(source: Path, target: Path, tables: Sequence[str]) -> dict[str, int]:
        counts = ops_repo.online_backup(source, target, tables)
        scramble_pages(target)
        return counts

    broken = OpsService(opened.db, opened.settings, clock, opened.alerts, snapshot=corrupting)
    manifest = await broken.backup()
    assert not manifest.ok
    assert {c.name for c in manifest.failed_checks} >= {"integrity", "drill"}
    assert alerts.fired
    assert alerts.fired[0][0] == "backup"
    assert manifest.file in alerts.fired[0][1]
    status = await opened.ops.status()
    assert status.last_backup is not None
    assert not status.last_backup.ok
    assert status.last_ok_backup_at is None
    assert status.failing_alerts == ("backup",)

    clock.advance(timedelta(minutes=5))
    good = await opened.ops.backup()
    assert good.ok
    assert alerts.recovered == [("backup", f"备份恢复正常：{good.file} 通过全部检查。")]
    status = await opened.ops.status()
    assert status.last_backup is not None
    assert status.last_backup.ok
    assert status.last_ok_backup_at == good.created_at
    assert status.failing_alerts == ()


async def test_a_failed_snapshot_leaves_no_file_and_alerts(
    opened: Yuji, alerts: RecordingAlertSink
) -> None:
    def refusing(source: Path, target: Path, tables: Sequence[str]) -> dict[str, int]:
        target.write_bytes(b"half")
        raise StorageError("disk I/O error")

    ops = OpsService(opened.db, opened.settings, opened.clock, opened.alerts, snapshot=refusing)
    manifest = await ops.backup()
    assert not manifest.ok
    assert manifest.checks[0].name == "snapshot"
    assert "disk I/O error" in manifest.checks[0].detail
    assert sorted(p.suffix for p in opened.settings.backups_dir.iterdir()) == [".json"]
    assert alerts.fired[0][0] == "backup"


async def test_retention_prunes_the_folder_after_each_backup(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data", backup_keep_latest=3, backup_keep_daily=2, backup_keep_weekly=1
    )
    core = await Yuji.open(settings, clock=clock, alert_sink=RecordingAlertSink())
    try:
        made: list[BackupManifest] = []
        for _ in range(12):  # every 3 hours for a day and a half
            made.append(await core.ops.backup())
            clock.advance(timedelta(hours=3))
        kept = list_manifests(settings.backups_dir)
        files = sorted(p.name for p in settings.backups_dir.glob("*.db"))
    finally:
        await core.close()
    assert 3 <= len(kept) <= 3 + 2 + 1
    assert files == sorted(m.file for m in kept)
    assert {m.file for m in made[-3:]} <= {m.file for m in kept}


async def test_each_verified_backup_reaches_the_mirror(tmp_path: Path, clock: FakeClock) -> None:
    mirror = tmp_path / "other-disk"
    settings = Settings(data_dir=tmp_path / "data", backup_mirror=str(mirror))
    core = await Yuji.open(settings, clock=clock, alert_sink=RecordingAlertSink())
    try:
        await add_experiences(core.db, 50)
        manifest = await core.ops.backup()
    finally:
        await core.close()
    assert manifest.ok
    assert manifest.mirrored_to == str(mirror)
    assert sha256_file(mirror / manifest.file) == manifest.sha256
    assert list_manifests(mirror) == [manifest]


async def test_a_failing_mirror_alerts_but_keeps_the_backup(
    tmp_path: Path, clock: FakeClock
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the mirror folder should be")
    alerts = RecordingAlertSink()
    settings = Settings(data_dir=tmp_path / "data", backup_mirror=str(blocker / "sub"))
    core = await Yuji.open(settings, clock=clock, alert_sink=alerts)
    try:
        manifest = await core.ops.backup()
    finally:
        await core.close()
    assert manifest.ok
    assert manifest.mirrored_to is None
    assert [k for k, _ in alerts.fired] == ["backup.mirror"]


async def test_backup_if_due_follows_the_interval(opened: Yuji, clock: FakeClock) -> None:
    first = await opened.ops.backup_if_due()
    assert first is not None
    assert first.reason == "scheduled"
    clock.advance(timedelta(hours=2, minutes=59))
    assert await opened.ops.backup_if_due() is None
    clock.advance(timedelta(minutes=1))
    assert await opened.ops.backup_if_due() is not None


def test_backup_due_retries_a_failure_sooner(clock: FakeClock) -> None:
    ok = BackupManifest(
        file="yuji-x.db",
        created_at=clock.now(),
        finished_at=clock.now(),
        reason="scheduled",
        ok=True,
        checks=(),
    )
    later = clock.now() + timedelta(minutes=30)
    assert backup_due(None, clock.now(), 10800)
    assert not backup_due(ok, later, 10800)
    assert backup_due(replace(ok, ok=False), later, 10800)
    assert backup_due(ok, clock.now() + timedelta(hours=3), 10800)


def test_count_shortfalls_names_missing_rows() -> None:
    assert count_shortfalls({"a": 5}, at_least={"a": 5}, exactly={}) == []
    assert count_shortfalls({"a": 4}, at_least={"a": 5}, exactly={}) == ["a: 4 < 5"]
    assert count_shortfalls({}, at_least={}, exactly={"b": 1}) == ["b: None != 1"]


def test_manifest_round_trips_through_json(clock: FakeClock) -> None:
    from memory_core.ops.manifest import Check

    manifest = BackupManifest(
        file="yuji-20261120T120000Z.db",
        created_at=clock.now(),
        finished_at=clock.now() + timedelta(seconds=2),
        reason="command",
        ok=False,
        checks=(Check("integrity", False, "页损坏"), Check("drill", True, "ok")),
        live_counts=dict.fromkeys(TRUTH_TABLES, 3),
        backup_counts=dict.fromkeys(TRUTH_TABLES, 3),
        size_bytes=4096,
        sha256="ab" * 32,
        schema_revision="0001",
        duration_s=1.5,
    )
    assert BackupManifest.from_json(manifest.to_json()) == manifest
    assert '"version": 1' in manifest.to_json()
    assert "页损坏" in manifest.to_json()


async def test_backups_refuse_a_database_that_is_neither_a_file_nor_postgresql(
    clock: FakeClock, tmp_path: Path
) -> None:
    from memory_core.errors import ConfigError

    core = await Yuji.open(Settings(data_dir=tmp_path / "d"), clock=clock)
    try:
        ops = OpsService(core.db, core.settings, clock, core.alerts)
        # An in-memory SQLite database, say: nothing to copy, no pg_dump to run.
        ops.db = type("NoFile", (), {"sqlite_path": None, "is_postgres": False})()  # type: ignore[assignment]
        with pytest.raises(ConfigError, match="backups need a database file or PostgreSQL"):
            await ops.backup()
        assert await ops.backup_if_due() is None
    finally:
        await core.close()


def _age(path: Path, *, hours: float) -> Path:
    when = time.time() - hours * 3600
    os.utime(path, (when, when))
    return path


def _write_aged(path: Path, data: bytes, *, hours: float) -> Path:
    path.write_bytes(data)
    return _age(path, hours=hours)


async def test_a_killed_backups_files_are_swept_once_older_than_a_running_one_can_be(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(data_dir=tmp_path / "data", backup_orphan_after_s=3600)
    folder = settings.backups_dir
    (folder / ".drill-xyz").mkdir(parents=True)
    # What kills leave: a renamed copy with no manifest, a half-written copy, a
    # manifest's temporary file and a drill folder, all hours old...
    old = [
        _write_aged(folder / "yuji-20261101T000000Z.db", b"x" * 1000, hours=5),
        _write_aged(folder / "yuji-20261102T000000Z.db.partial", b"x" * 1000, hours=5),
        _write_aged(folder / ".part-abc123", b"x" * 1000, hours=5),
        _write_aged(folder / ".drill-xyz" / "restored.db", b"y" * 500, hours=5),
    ]
    _age(folder / ".drill-xyz", hours=5)
    # ...one that may belong to a backup still running, and a file yuji never writes.
    young = _write_aged(folder / "yuji-20261120T115900Z.db.partial", b"z", hours=0.1)
    notes = _write_aged(folder / "notes.txt", b"an operator's notes", hours=5)

    listed = find_orphans(folder)
    expected = [p.name for p in old[:3]]
    assert sorted(o.name for o in listed) == sorted([*expected, ".drill-xyz", young.name])
    caplog.set_level(logging.INFO, logger="yuji.ops")
    core = await Yuji.open(settings, clock=clock, alert_sink=RecordingAlertSink())
    try:
        manifest = await core.ops.backup()
    finally:
        await core.close()

    assert manifest.ok
    left = sorted(p.name for p in folder.iterdir())
    assert left == sorted([manifest.file, f"{manifest.name}.json", young.name, notes.name])
    assert not any(p.exists() for p in old)
    swept = [r.getMessage() for r in caplog.records if "orphan" in r.getMessage()]
    assert len(swept) == 1
    assert "4 orphaned backup files (3.4 KB)" in swept[0]
    assert "yuji-20261101T000000Z.db" in swept[0]
