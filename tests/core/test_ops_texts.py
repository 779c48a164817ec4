"""The words ops uses: `/backup` replies, `/status` lines, the QQ-offline alerts."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from memory_core.ops import (
    BackupManifest,
    BackupStatus,
    Check,
    OpsStatus,
    Sizes,
    backup_reply,
    bot_offline_text,
    status_lines,
)

ZONE = ZoneInfo("Asia/Shanghai")
AT = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)  # 20:00 in Shanghai
MB = 1024 * 1024


def manifest(ok: bool, checks: tuple[Check, ...] = ()) -> BackupManifest:
    return BackupManifest(
        file="yuji-20261120T120000Z.db",
        created_at=AT,
        finished_at=AT,
        reason="command",
        ok=ok,
        checks=checks,
        backup_counts={"experiences": 900, "memories": 100},
        size_bytes=3 * MB,
    )


def test_backup_reply_ok_and_failed() -> None:
    assert backup_reply(manifest(True), ZONE) == (
        "备份好了：yuji-20261120T120000Z.db\n3.0 MB，1000 行关键数据，完整性、行数、恢复演练都通过。"
    )
    failed = manifest(False, (Check("integrity", False, "x"), Check("drill", False, "y")))
    assert backup_reply(failed, ZONE) == (
        "备份失败（11-20 20:00）：完整性、恢复演练没通过。已发告警，详情见日志。"
    )


def test_status_lines() -> None:
    sizes = Sizes(database=10 * MB, attachments=2 * MB, backups=30 * MB)
    never = OpsStatus(None, None, 0, sizes, 5 * 1024**3, ())
    assert status_lines(never, ZONE) == {
        "上次备份": "还没有",
        "占用": "数据库 10.0 MB，附件 2.0 MB，备份 30.0 MB（上限 5.0 GB）",
    }
    good = BackupStatus("yuji-a.db", AT, True, (), MB)
    assert status_lines(OpsStatus(good, AT, 4, sizes, 0, ()), ZONE)["上次备份"] == (
        "11-20 20:00，检查通过（共保留 4 份）"
    )
    bad = BackupStatus("yuji-b.db", AT, False, ("counts",), MB)
    lines = status_lines(OpsStatus(bad, None, 0, sizes, 0, ("backup", "capacity")), ZONE)
    assert lines["上次备份"] == "11-20 20:00，失败（行数）；还没有成功过"
    assert lines["未恢复的告警"] == "backup、capacity"
    assert "上限" not in lines["占用"]


def test_offline_text_without_details() -> None:
    assert bot_offline_text("42") == (
        "QQ 账号 42 掉线了。连接可能还在，但收不到也发不出消息；请到 NapCat 重新登录。"
    )
