"""The capacity sentinel: how much disk yuji's data takes, and whether that is too much.

It measures and warns; it never deletes anything (retention is a separate, explicit
policy). Measuring walks directories, so `measure` is blocking: run it in a thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memory_core.settings import Settings
from memory_core.storage.backend_info import sqlite_bytes

from .alerts import AlertSink

CAPACITY_ALERT_KEY = "capacity"
STORAGE_FULL_KEY = "storage-full"
STORAGE_WRITABLE_TEXT = "数据库又能写入了：消息照常存档。"


@dataclass(frozen=True, slots=True)
class StorageFullAlerts:
    """The database's `on_full` / `on_writable`, as one alert key that fires and recovers."""

    alerts: AlertSink

    def full(self, detail: str) -> None:
        self.alerts.fire(STORAGE_FULL_KEY, storage_full_text(detail))

    def writable(self) -> None:
        self.alerts.recover(STORAGE_FULL_KEY, STORAGE_WRITABLE_TEXT)


def storage_full_text(detail: str) -> str:
    """The alert when the disk has no room for a write (`detail`: SQLite's words)."""
    return f"数据库写不进去了（磁盘或数据库已满）：{detail}。腾出空间后会自己恢复。"


@dataclass(frozen=True, slots=True)
class Sizes:
    database: int
    """The SQLite file with its -wal and -shm, or `pg_database_size` on PostgreSQL."""
    attachments: int
    backups: int

    @property
    def total(self) -> int:
        return self.database + self.attachments + self.backups


def measure(settings: Settings, database_path: Path | None = None) -> Sizes:
    """Sizes now; `database_path` is the SQLite file in use (None: not SQLite, 0 bytes)."""
    return Sizes(
        database=0 if database_path is None else sqlite_bytes(database_path),
        attachments=dir_size(settings.attachments_path),
        backups=dir_size(settings.backups_dir),
    )


def dir_size(root: Path) -> int:
    if not root.is_dir():
        return 0
    return sum(_file_size(p) for p in root.rglob("*"))


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:  # vanished while walking (a rotated log, a pruned backup)
        return 0


def over_limit(sizes: Sizes, limit_bytes: int) -> bool:
    return limit_bytes > 0 and sizes.total > limit_bytes


def human_bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def capacity_text(sizes: Sizes, limit_bytes: int) -> str:
    return (
        f"数据占用 {human_bytes(sizes.total)}，超过上限 {human_bytes(limit_bytes)}"
        f"（数据库 {human_bytes(sizes.database)}，附件 {human_bytes(sizes.attachments)}，"
        f"备份 {human_bytes(sizes.backups)}）。什么都没删，请腾出空间或调高 "
        "YUJI_CAPACITY_LIMIT_BYTES。"
    )


def capacity_ok_text(sizes: Sizes, limit_bytes: int) -> str:
    return f"数据占用回到 {human_bytes(sizes.total)}，低于上限 {human_bytes(limit_bytes)}。"
