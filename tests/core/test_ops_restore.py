"""Restore: a backup round-trips into a new file; the live database is never written;
and the `yuji backup` / `yuji restore` commands."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from sqlalchemy import select

from memory_core import FakeClock, Settings, Yuji
from memory_core.cli import main
from memory_core.errors import NotFound, ValidationError
from memory_core.ops.alerts import RecordingAlertSink
from memory_core.ops.restore import find_backup, live_database_path, restore_backup
from memory_core.storage.ops import ops_repo
from memory_core.storage.schema import TRUTH_TABLES, experiences
from tests.core.ops_helpers import add_experiences, scramble_pages

pytestmark = pytest.mark.sqlite_only("restores a SQLite file (PostgreSQL's: test_pg_backup.py)")


async def texts(core: Yuji) -> list[str]:
    async with core.db.read() as conn:
        rows = await conn.execute(select(experiences.c.text).order_by(experiences.c.id))
        return [r.text for r in rows]


async def test_restore_round_trip(tmp_path: Path, clock: FakeClock) -> None:
    settings = Settings(data_dir=tmp_path / "live")
    core = await Yuji.open(settings, clock=clock, alert_sink=RecordingAlertSink())
    try:
        await add_experiences(core.db, 120, scope="group:1")
        await add_experiences(core.db, 30, scope="private:9")
        before = await texts(core)
        manifest = await core.ops.backup()
        await add_experiences(core.db, 5)  # after the backup: must not come back
    finally:
        await core.close()

    target = tmp_path / "restored" / "yuji.db"
    report = await asyncio.to_thread(
        restore_backup,
        settings.backups_dir / manifest.file,
        target,
        live_database=settings.database_path,
    )
    assert report.ok, report.checks
    assert report.counts == manifest.backup_counts
    assert report.counts["experiences"] == 150

    restored = await Yuji.open(Settings(data_dir=target.parent), clock=clock)
    try:
        assert await texts(restored) == before
    finally:
        await restored.close()


async def test_restore_never_writes_over_the_live_database(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = Settings(data_dir=tmp_path / "live")
    core = await Yuji.open(settings, clock=clock)
    try:
        manifest = await core.ops.backup()
    finally:
        await core.close()
    backup = settings.backups_dir / manifest.file
    live_bytes = settings.database_path.read_bytes()
    for target in (
        settings.database_path,
        settings.data_dir / "yuji.db-wal",
        tmp_path / "live" / "." / "yuji.db",
    ):
        with pytest.raises(ValidationError):
            restore_backup(backup, target, live_database=settings.database_path)
    existing = tmp_path / "existing.db"
    existing.write_bytes(b"keep me")
    with pytest.raises(ValidationError):
        restore_backup(backup, existing, live_database=settings.database_path)
    assert existing.read_bytes() == b"keep me"
    assert settings.database_path.read_bytes() == live_bytes


async def test_a_corrupted_backup_is_not_restored(tmp_path: Path, clock: FakeClock) -> None:
    settings = Settings(data_dir=tmp_path / "live")
    core = await Yuji.open(settings, clock=clock)
    try:
        await add_experiences(core.db, 100)
        manifest = await core.ops.backup()
    finally:
        await core.close()
    backup = settings.backups_dir / manifest.file
    scramble_pages(backup)
    target = tmp_path / "new.db"
    report = restore_backup(backup, target, live_database=settings.database_path)
    assert not report.ok
    assert not report.written
    assert not target.exists()
    assert not target.with_name("new.db.partial").exists()


def test_find_backup_by_path_name_or_latest(tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    with pytest.raises(NotFound):
        find_backup("latest", folder)
    with pytest.raises(NotFound):
        find_backup("yuji-nothing", folder)


def test_live_database_path_follows_the_url(tmp_path: Path) -> None:
    assert live_database_path(Settings(data_dir=tmp_path)) == tmp_path / "yuji.db"
    url = f"sqlite+aiosqlite:///{tmp_path}/other.db"
    assert live_database_path(Settings(database_url=url)) == tmp_path / "other.db"
    assert live_database_path(Settings(database_url="postgresql+asyncpg://h/db")) is None


# --- the commands ----------------------------------------------------------------------


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no stray .env
    for key in ("YUJI_TELEGRAM_BOT_TOKEN", "YUJI_BACKUP_MIRROR", "YUJI_DATABASE_URL"):
        monkeypatch.delenv(key, raising=False)
    data = tmp_path / "data"
    monkeypatch.setenv("YUJI_DATA_DIR", str(data))
    return data


def test_cli_backup_list_verify_and_restore(
    cli_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["backup", "--list"]) == 0
    assert "里没有备份" in capsys.readouterr().out

    assert main(["backup", "--json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["ok"] is True
    assert made["reason"] == "cli"
    assert set(made["backup_counts"]) == set(TRUTH_TABLES)

    assert main(["backup", "--list"]) == 0
    assert made["file"] in capsys.readouterr().out

    assert main(["backup", "--verify", "latest"]) == 0
    assert "验证通过" in capsys.readouterr().out

    target = tmp_path / "restored.db"
    assert main(["restore", "latest", "--to", str(target)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("已恢复 ")
    assert ops_repo.integrity_problems(target) == []

    assert main(["restore", made["file"], "--to", str(cli_env / "yuji.db")]) == 2
    assert capsys.readouterr().out.startswith("拒绝：")
    assert main(["restore", made["file"].removesuffix(".db"), "--to", str(target)]) == 2

    scramble_pages(cli_env / "backups" / made["file"])
    assert main(["backup", "--verify", made["file"]]) == 1
    assert "验证失败" in capsys.readouterr().out
    assert main(["restore", made["file"], "--to", str(tmp_path / "other.db"), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["written"] is False


def test_cli_backup_verify_json_prints_every_check(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["backup", "--json"]) == 0
    made = json.loads(capsys.readouterr().out)

    assert main(["backup", "--verify", "latest", "--json"]) == 0
    verified = json.loads(capsys.readouterr().out)
    assert verified["ok"] is True
    assert verified["file"].endswith(made["file"])
    assert [c["name"] for c in verified["checks"]] == ["sha256", "integrity", "counts", "drill"]
    assert all(c["ok"] is True and isinstance(c["detail"], str) for c in verified["checks"])


def test_cli_backup_list_shows_what_killed_backups_left(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = cli_env / "backups"
    folder.mkdir(parents=True)
    (folder / "yuji-20261101T000000Z.db").write_bytes(b"x" * 2048)

    assert main(["backup", "--list"]) == 0
    out = capsys.readouterr().out
    assert "里没有备份" in out
    assert "被杀掉的备份留下的文件" in out
    assert "2.0 KB  " in out
    assert "yuji-20261101T000000Z.db" in out


def test_backup_verify_and_restore_print_the_hash(
    cli_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["backup", "--json"]) == 0
    sha = json.loads(capsys.readouterr().out)["sha256"]
    assert len(sha) == 64
    assert main(["backup"]) == 0
    made = capsys.readouterr().out
    assert main(["backup", "--verify", "latest"]) == 0
    verified = capsys.readouterr().out
    assert main(["restore", "latest", "--to", str(tmp_path / "restored.db")]) == 0
    restored = capsys.readouterr().out
    for out in (made, verified, restored):
        assert re.search(r"通过 校验和（sha256）：[0-9a-f]{64}\n", out), out
