"""The capacity sentinel and attachment retention."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import insert, select

from memory_core import FakeClock, Settings, Yuji
from memory_core.archive.store import AttachmentStore
from memory_core.ops.alerts import AlertGate, RecordingAlertSink
from memory_core.ops.capacity import Sizes, capacity_text, human_bytes, measure, over_limit
from memory_core.ops.service import OpsService
from memory_core.storage.schema import attachments
from tests.core.ops_helpers import add_experiences


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


async def test_capacity_sentinel_alerts_above_a_small_limit_and_deletes_nothing(
    tmp_path: Path, clock: FakeClock
) -> None:
    sink = RecordingAlertSink()
    settings = Settings(data_dir=tmp_path / "data", capacity_limit_bytes=50_000)
    core = await Yuji.open(settings, clock=clock, alert_sink=sink)
    try:
        await add_experiences(core.db, 200)
        store = AttachmentStore(settings.attachments_path)
        store.put(b"\x89PNG" + b"x" * 20_000)
        await core.ops.backup()
        before = files_under(settings.data_dir)

        report = await core.ops.check_capacity()
        assert report.over
        assert report.sizes.database > 0
        assert report.sizes.attachments == 20_004
        assert report.sizes.backups > 0
        assert report.sizes.total > 50_000
        assert [k for k, _ in sink.fired] == ["capacity"]
        assert "超过上限 48.8 KB" in sink.fired[0][1]
        assert files_under(settings.data_dir) == before  # measured, never deleted

        await core.ops.check_capacity()  # still over: no second message within the hour
        assert len(sink.fired) == 1

        roomy = OpsService(
            core.db, settings.with_changes(capacity_limit_bytes=10**12), clock, core.alerts
        )
        assert not (await roomy.check_capacity()).over
        assert [k for k, _ in sink.recovered] == ["capacity"]
    finally:
        await core.close()


def test_measure_counts_wal_files_and_missing_folders(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert measure(settings, settings.database_path) == Sizes(0, 0, 0)
    settings.database_path.write_bytes(b"a" * 10)
    (tmp_path / "yuji.db-wal").write_bytes(b"b" * 5)
    (tmp_path / "backups" / "x").mkdir(parents=True)
    (tmp_path / "backups" / "x" / "f").write_bytes(b"c" * 7)
    assert measure(settings, settings.database_path) == Sizes(15, 0, 7)
    assert measure(settings, None).database == 0


def test_limit_and_text() -> None:
    sizes = Sizes(database=3 * 1024**3, attachments=2 * 1024**3, backups=1024**3)
    assert over_limit(sizes, 5 * 1024**3)
    assert not over_limit(sizes, 0)  # 0 switches the sentinel off
    assert human_bytes(512) == "512 B"
    assert human_bytes(5 * 1024**3) == "5.0 GB"
    text = capacity_text(sizes, 5 * 1024**3)
    assert "6.0 GB" in text
    assert "YUJI_CAPACITY_LIMIT_BYTES" in text


async def test_attachments_past_retention_lose_their_file_and_keep_their_row(
    core: Yuji, clock: FakeClock
) -> None:
    store = AttachmentStore(core.settings.attachments_path)
    old = store.put(b"old image")
    gone = store.put(b"already deleted by hand")
    store.path_for(gone).unlink()
    fresh = store.put(b"fresh image")
    now = clock.now()
    rows = [
        {"sha256": old, "status": "stored", "first_seen": now - timedelta(days=91)},
        {"sha256": gone, "status": "stored", "first_seen": now - timedelta(days=200)},
        {"sha256": fresh, "status": "stored", "first_seen": now - timedelta(days=89)},
        {"sha256": None, "status": "failed", "first_seen": now - timedelta(days=300)},
    ]
    async with core.db.write() as conn:
        await conn.execute(insert(attachments), rows)

    report = await core.ops.clean_attachments()
    assert (report.cleaned, report.bytes_freed, report.missing) == (2, len(b"old image"), 1)
    assert not store.path_for(old).exists()
    assert store.path_for(fresh).exists()
    async with core.db.read() as conn:
        result = await conn.execute(
            select(attachments.c.sha256, attachments.c.status, attachments.c.cleaned_at)
        )
        states = {r.sha256: (r.status, r.cleaned_at) for r in result}
    assert states == {
        old: ("cleaned", now),
        gone: ("cleaned", now),
        fresh: ("stored", None),
        None: ("failed", None),
    }
    again = await core.ops.clean_attachments()
    assert again.cleaned == 0

    clock.advance(timedelta(days=2))
    daily_clean, daily_capacity = await core.ops.daily()
    assert daily_clean.cleaned == 1
    assert not store.path_for(fresh).exists()
    assert not daily_capacity.over


async def test_status_reports_sizes_and_last_backup(core: Yuji) -> None:
    empty = await core.ops.status()
    assert empty.last_backup is None
    assert empty.backups_kept == 0
    await add_experiences(core.db, 10)
    manifest = await core.ops.backup()
    status = await core.ops.status()
    assert status.last_backup is not None
    assert (status.last_backup.file, status.last_backup.ok) == (manifest.file, True)
    assert status.last_backup.created_at == manifest.created_at
    assert status.sizes.backups >= manifest.size_bytes
    assert status.sizes.database > 0
    assert status.capacity_limit_bytes == core.settings.capacity_limit_bytes
    assert isinstance(core.alerts, AlertGate)
    lines = await core.ops.status_lines("group:1")
    assert lines["上次备份"].endswith("检查通过（共保留 1 份）")
    assert "上限 5.0 GB" in lines["占用"]
