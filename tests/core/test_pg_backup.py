"""Backups of a PostgreSQL store: pg_dump with the manifest, checks, retention and
mirror of SQLite's; `--verify`; restore into an empty database only; the tools'
version; and the commands. On the real servers of tests/backends.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select, text

from memory_core import FakeClock, Settings, Yuji
from memory_core.cli import main
from memory_core.errors import ConfigError, ValidationError
from memory_core.ops.alerts import RecordingAlertSink
from memory_core.ops.pg_backup import restore_pg_backup, tools_for, verify_pg_backup
from memory_core.storage.postgres import pg_server
from memory_core.storage.schema import experiences
from tests import backends
from tests.core.ops_helpers import add_experiences

pytestmark = pytest.mark.pg_only("pg_dump backups (SQLite's: test_ops_backup.py)")


async def _databases(url: str, prefix: str) -> list[str]:
    async with pg_server.connected(url) as conn:
        rows = await conn.execute(
            text("SELECT datname FROM pg_database WHERE datname LIKE :p"), {"p": f"{prefix}%"}
        )
        return [r[0] for r in rows]


async def _texts(url: str) -> list[str]:
    async with pg_server.connected(url) as conn:
        rows = await conn.execute(select(experiences.c.text).order_by(experiences.c.id))
        return [r.text for r in rows]


async def test_backup_dumps_counts_drills_and_drops_its_scratch_database(
    settings: Settings, clock: FakeClock
) -> None:
    sink = RecordingAlertSink()
    core = await Yuji.open(settings, clock=clock, alert_sink=sink)
    try:
        await add_experiences(core.db, 40)
        manifest = await core.ops.backup(reason="test")
        assert manifest.ok, manifest.failed_checks
        assert manifest.file.endswith(".dump")
        assert [c.name for c in manifest.checks] == [
            "snapshot",
            "sha256",
            "integrity",
            "counts",
            "drill",
        ]
        assert manifest.live_counts["experiences"] == 40
        assert manifest.backup_counts == manifest.live_counts
        assert manifest.schema_revision
        assert manifest.live_bytes > 0
        path = settings.backups_dir / manifest.file
        assert path.read_bytes()[:5] == b"PGDMP"  # pg_dump's custom format
        assert (settings.backups_dir / f"{manifest.name}.json").is_file()
        assert await _databases(core.db.url, "yuji_drill_") == []

        status = await core.ops.status()
        assert status.last_backup is not None
        assert status.last_backup.ok
        assert status.sizes.database > 0  # pg_database_size
        assert status.sizes.backups >= manifest.size_bytes

        checks, again = await verify_pg_backup(
            path, core.db.url, await tools_for(core.db.url, settings.pg_dump)
        )
        assert all(c.ok for c in checks), checks
        assert again == manifest
    finally:
        await core.close()


async def test_a_changed_dump_fails_verification(settings: Settings, clock: FakeClock) -> None:
    core = await Yuji.open(settings, clock=clock, alert_sink=RecordingAlertSink())
    try:
        await add_experiences(core.db, 5)
        manifest = await core.ops.backup()
        tools = await tools_for(core.db.url, settings.pg_dump)
    finally:
        await core.close()
    path = settings.backups_dir / manifest.file
    data = bytearray(path.read_bytes())
    data[len(data) // 2 :] = b"\0" * (len(data) - len(data) // 2)
    path.write_bytes(bytes(data))
    checks, _ = await verify_pg_backup(path, settings.sqlalchemy_url, tools)
    failed = {c.name for c in checks if not c.ok}
    assert "sha256" in failed
    assert failed & {"integrity", "drill"}
    assert await _databases(settings.sqlalchemy_url, "yuji_drill_") == []


async def test_restore_into_an_empty_database_only(settings: Settings, clock: FakeClock) -> None:
    core = await Yuji.open(settings, clock=clock, alert_sink=RecordingAlertSink())
    url = core.db.url
    try:
        await add_experiences(core.db, 30)
        before = await _texts(url)
        manifest = await core.ops.backup()
        await add_experiences(core.db, 3)  # after the backup: must not come back
        tools = await tools_for(url, settings.pg_dump)
    finally:
        await core.close()
    path = settings.backups_dir / manifest.file

    with pytest.raises(ValidationError, match="not empty"):
        await restore_pg_backup(path, url, tools)  # the live database
    assert len(await _texts(url)) == 33

    async with pg_server.scratch_database(url, "test") as target:
        report = await restore_pg_backup(path, target, tools)
        assert report.ok, report.checks
        assert report.counts == manifest.backup_counts
        assert await _texts(target) == before
        # The restored store opens and migrates nothing.
        restored = await Yuji.open(settings.with_changes(database_url=target), clock=clock)
        await restored.close()


@pytest.mark.only_on("pg18", reason="needs a server newer than PostgreSQL 15's client tools")
async def test_tools_older_than_the_server_are_one_line(
    settings: Settings, clock: FakeClock
) -> None:
    sink = RecordingAlertSink()
    old = settings.with_changes(pg_dump=str(backends.PG15_BIN / "pg_dump"))
    core = await Yuji.open(old, clock=clock, alert_sink=sink)
    try:
        with pytest.raises(ConfigError) as raised:
            await core.ops.backup()
        assert "\n" not in str(raised.value)
        assert "is PostgreSQL 15, older than the server (PostgreSQL 18" in str(raised.value)
        assert [k for k, _ in sink.fired] == ["backup"]
        assert not list(old.backups_dir.glob("*.dump*"))
    finally:
        await core.close()


async def test_a_missing_pg_dump_is_one_line(settings: Settings, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"YUJI_PG_DUMP=.*: no such file"):
        await tools_for(settings.sqlalchemy_url, str(tmp_path / "nowhere" / "pg_dump"))


async def test_retention_mirror_and_schedule_as_on_sqlite(
    settings: Settings, clock: FakeClock, tmp_path: Path
) -> None:
    from datetime import timedelta

    settings = settings.with_changes(
        backup_mirror=str(tmp_path / "mirror"),
        backup_keep_latest=2,
        backup_keep_daily=0,
        backup_keep_weekly=0,
    )
    core = await Yuji.open(settings, clock=clock, alert_sink=RecordingAlertSink())
    try:
        first = await core.ops.backup_if_due()
        assert first is not None
        assert first.ok
        assert first.reason == "scheduled"
        assert await core.ops.backup_if_due() is None  # not due yet
        for _ in range(2):
            clock.advance(timedelta(seconds=settings.backup_interval_s))
            made = await core.ops.backup_if_due()
            assert made is not None
            assert made.ok
            assert made.mirrored_to == settings.backup_mirror
        kept = sorted(p.name for p in settings.backups_dir.glob("*.dump"))
        assert len(kept) == 2
        assert first.file not in kept
        assert sorted(p.name for p in (tmp_path / "mirror").glob("*.dump")) == kept
    finally:
        await core.close()


def test_the_commands(
    settings: Settings,
    backend: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("YUJI_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("YUJI_DATABASE_URL", settings.sqlalchemy_url)
    monkeypatch.setenv("YUJI_PG_DUMP", settings.pg_dump)
    monkeypatch.setenv("YUJI_VECTOR_MODE", "off")
    assert main(["backup", "--json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["ok"]
    assert made["file"].endswith(".dump")
    assert main(["backup", "--verify", "latest"]) == 0
    assert "验证通过" in capsys.readouterr().out

    # The live database is not empty: one line, exit 2.
    assert main(["restore", "latest", "--to", settings.sqlalchemy_url]) == 2
    out = capsys.readouterr().out
    assert out.startswith("拒绝：")
    assert "not empty" in out
    assert out.count("\n") == 1
    # A dump never goes to a file.
    assert main(["restore", "latest", "--to", str(settings.data_dir / "x.db")]) == 2
    assert "只能恢复进一个 PostgreSQL URL" in capsys.readouterr().out
