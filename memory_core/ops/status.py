"""What `core.ops.status()` returns, and its `/status` lines (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from .capacity import Sizes, human_bytes

CHECK_NAMES = {
    "snapshot": "快照",
    "sha256": "校验和",
    "integrity": "完整性",
    "counts": "行数",
    "drill": "恢复演练",
    "mirror": "镜像",
}


@dataclass(frozen=True, slots=True)
class BackupStatus:
    file: str
    created_at: datetime
    ok: bool
    failed_checks: tuple[str, ...]
    size_bytes: int


@dataclass(frozen=True, slots=True)
class OpsStatus:
    last_backup: BackupStatus | None
    last_ok_backup_at: datetime | None
    backups_kept: int
    sizes: Sizes
    capacity_limit_bytes: int
    failing_alerts: tuple[str, ...]
    """Alert keys currently failing (fired, not yet recovered)."""


def local(instant: datetime, zone: ZoneInfo) -> str:
    return f"{instant.astimezone(zone):%m-%d %H:%M}"


def status_lines(status: OpsStatus, zone: ZoneInfo) -> dict[str, str]:
    """Labelled lines for `/status` and `yuji status`."""
    last = status.last_backup
    if last is None:
        backup = "还没有"
    elif last.ok:
        backup = f"{local(last.created_at, zone)}，检查通过（共保留 {status.backups_kept} 份）"
    else:
        failed = "、".join(CHECK_NAMES.get(n, n) for n in last.failed_checks)
        since = (
            f"；上次成功 {local(status.last_ok_backup_at, zone)}"
            if status.last_ok_backup_at
            else "；还没有成功过"
        )
        backup = f"{local(last.created_at, zone)}，失败（{failed}）{since}"
    sizes = status.sizes
    usage = (
        f"数据库 {human_bytes(sizes.database)}，附件 {human_bytes(sizes.attachments)}，"
        f"备份 {human_bytes(sizes.backups)}"
    )
    if status.capacity_limit_bytes > 0:
        usage += f"（上限 {human_bytes(status.capacity_limit_bytes)}）"
    lines = {"上次备份": backup, "占用": usage}
    if status.failing_alerts:
        lines["未恢复的告警"] = "、".join(status.failing_alerts)
    return lines
