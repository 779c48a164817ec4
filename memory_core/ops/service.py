"""`core.ops`: verified backups, retention, the capacity sentinel and attachment cleanup.

A SQLite store is backed up with the online backup API (backup.py), a PostgreSQL one
with `pg_dump` (pg_backup.py); both end in the same folder, manifest, retention and
mirror. Everything blocking (the online backup, pg_dump, hashing, walking folders)
runs in a worker thread; one lock keeps two backups of this process from overlapping. Failures are
reported through `core.alerts` (key `backup`, `backup.mirror`, `capacity`) and the
next success sends the recovery.
"""

from __future__ import annotations

import asyncio
import errno
import logging
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from memory_core.archive.store import AttachmentStore
from memory_core.clock import Clock
from memory_core.errors import ConfigError
from memory_core.settings import Settings
from memory_core.storage import Tools, ops_repo
from memory_core.storage.backend_info import database_bytes
from memory_core.storage.engine import Database

from .alerts import AlertSink
from .attachment_retention import CleanReport, clean_attachments
from .backup import BACKUP_ALERT_KEY, Snapshot, create_backup
from .capacity import (
    CAPACITY_ALERT_KEY,
    Sizes,
    capacity_ok_text,
    capacity_text,
    measure,
    over_limit,
)
from .manifest import BackupManifest, list_manifests, write_manifest
from .orphans import sweep_orphans
from .pg_backup import create_pg_backup, tools_for
from .pruning import mirror, prune
from .retention import RetentionPolicy
from .status import BackupStatus, OpsStatus, status_lines

log = logging.getLogger("yuji.ops")

MIRROR_ALERT_KEY = "backup.mirror"
FAILED_RETRY_S = 30 * 60
"""A failed backup is tried again after this long (or the interval, if shorter)."""


@dataclass(frozen=True, slots=True)
class CapacityReport:
    sizes: Sizes
    limit_bytes: int
    over: bool


def backup_due(last: BackupManifest | None, now: datetime, interval_s: int) -> bool:
    """Pure: is a scheduled backup due, given the newest attempt?"""
    if last is None:
        return True
    wait = interval_s if last.ok else min(interval_s, FAILED_RETRY_S)
    return now - last.created_at >= timedelta(seconds=wait)


class OpsService:
    def __init__(
        self,
        db: Database,
        settings: Settings,
        clock: Clock,
        alerts: AlertSink,
        *,
        snapshot: Snapshot = ops_repo.online_backup,
    ) -> None:
        self.db = db
        self.settings = settings
        self.clock = clock
        self.alerts = alerts
        self._snapshot = snapshot
        self._repo = ops_repo.OpsRepo(db)
        self._lock = asyncio.Lock()
        self.policy = RetentionPolicy(
            latest=settings.backup_keep_latest,
            daily=settings.backup_keep_daily,
            weekly=settings.backup_keep_weekly,
        )
        self.zone = ZoneInfo(settings.timezone)

    @property
    def folder(self) -> Path:
        return self.settings.backups_dir

    @property
    def mirror_dir(self) -> Path | None:
        return Path(self.settings.backup_mirror) if self.settings.backup_mirror else None

    # --- backups ---------------------------------------------------------------------

    async def backup(self, *, reason: str = "manual") -> BackupManifest:
        """Make one verified backup now; alerts on failure, recovers on success."""
        source = self.db.sqlite_path
        tools = await self._pg_tools() if self.db.is_postgres else None
        if source is None and tools is None:
            raise ConfigError("backups need a database file or PostgreSQL (not :memory:)")
        async with self._lock:
            created_at = self.clock.now()
            try:
                if tools is not None:
                    made = await create_pg_backup(
                        self.db.url,
                        self.folder,
                        tools,
                        created_at=created_at,
                        reason=reason,
                        now=self.clock.now,
                    )
                    manifest, mirrored = await asyncio.to_thread(self._keep, made)
                else:
                    assert source is not None
                    manifest, mirrored = await asyncio.to_thread(
                        self._backup_blocking, source, created_at, reason
                    )
            except Exception as exc:  # disk full writing the manifest, and the like
                log.exception("backup failed unexpectedly")
                if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
                    # The disk is full: the storage-full alert, once, not a backup one.
                    self.db.mark_full(f"{type(exc).__name__}: {exc}")
                else:
                    self.alerts.fire(BACKUP_ALERT_KEY, f"备份出错：{type(exc).__name__}: {exc}")
                raise
        self._report(manifest, mirrored)
        return manifest

    async def pg_tools(self) -> Tools:
        """pg_dump and pg_restore for this server (a ConfigError line if unusable)."""
        return await tools_for(self.db.url, self.settings.pg_dump)

    async def _pg_tools(self) -> Tools:
        try:
            return await self.pg_tools()
        except ConfigError as exc:  # no backups until the operator acts: say so
            self.alerts.fire(BACKUP_ALERT_KEY, f"备份做不了：{exc}")
            raise

    async def backup_if_due(self) -> BackupManifest | None:
        """The scheduled entry: back up when the interval has passed since the last try."""
        if self.db.sqlite_path is None and not self.db.is_postgres:
            return None
        if self.db.full or self.db.down:
            # One alert says the store is full or away; a backup would only fail and
            # alert again. It runs at the first tick after a write succeeds.
            log.warning("scheduled backup waits: the database is full or unreachable")
            return None
        history = await self.backups()
        last = history[-1] if history else None
        if not backup_due(last, self.clock.now(), self.settings.backup_interval_s):
            return None
        return await self.backup(reason="scheduled")

    async def backups(self) -> list[BackupManifest]:
        """Every backup with a readable manifest, oldest first."""
        return await asyncio.to_thread(list_manifests, self.folder)

    def _backup_blocking(
        self, source: Path, created_at: datetime, reason: str
    ) -> tuple[BackupManifest, bool | None]:
        manifest = create_backup(
            source,
            self.folder,
            created_at=created_at,
            reason=reason,
            now=self.clock.now,
            snapshot=self._snapshot,
        )
        return self._keep(manifest)

    def _keep(self, manifest: BackupManifest) -> tuple[BackupManifest, bool | None]:
        """Mirror a new backup, write its manifest, apply retention, sweep orphans."""
        mirrored: bool | None = None
        mirror_dir = self.mirror_dir
        if manifest.ok and mirror_dir is not None:
            with_mirror = replace(manifest, mirrored_to=str(mirror_dir))
            check = mirror(self.folder / manifest.file, with_mirror, mirror_dir)
            mirrored = check.ok
            if check.ok:
                manifest = with_mirror
            else:
                log.error("backup mirror failed: %s", check.detail)
        write_manifest(self.folder, manifest)
        now = self.clock.now()
        removed = prune(self.folder, now=now, policy=self.policy, zone=self.zone)
        if mirror_dir is not None and mirror_dir.is_dir():
            removed += prune(mirror_dir, now=now, policy=self.policy, zone=self.zone)
        if removed:
            log.info("backup retention removed %s", ", ".join(removed))
        for folder in (self.folder, mirror_dir):
            if folder is not None:
                sweep_orphans(folder, older_than_s=self.settings.backup_orphan_after_s)
        return manifest, mirrored

    def _report(self, manifest: BackupManifest, mirrored: bool | None) -> None:
        if manifest.ok:
            log.info("backup %s verified (%.1fs)", manifest.file, manifest.duration_s)
            self.alerts.recover(BACKUP_ALERT_KEY, f"备份恢复正常：{manifest.file} 通过全部检查。")
        else:
            detail = "；".join(f"{c.name}: {c.detail}" for c in manifest.failed_checks)
            log.error("backup %s FAILED: %s", manifest.file, detail)
            self.alerts.fire(BACKUP_ALERT_KEY, f"备份 {manifest.file} 没通过检查：{detail}")
        if mirrored is False:
            self.alerts.fire(MIRROR_ALERT_KEY, f"备份 {manifest.file} 没能复制到镜像目录。")
        elif mirrored:
            self.alerts.recover(MIRROR_ALERT_KEY, "备份镜像恢复正常。")

    # --- capacity and attachments ----------------------------------------------------

    async def sizes(self) -> Sizes:
        sizes = await asyncio.to_thread(measure, self.settings)
        return replace(sizes, database=await database_bytes(self.db))

    async def check_capacity(self) -> CapacityReport:
        """Measure; above the limit an alert (nothing is deleted), below it a recovery."""
        sizes = await self.sizes()
        limit = self.settings.capacity_limit_bytes
        over = over_limit(sizes, limit)
        if over:
            self.alerts.fire(CAPACITY_ALERT_KEY, capacity_text(sizes, limit))
        else:
            self.alerts.recover(CAPACITY_ALERT_KEY, capacity_ok_text(sizes, limit))
        return CapacityReport(sizes=sizes, limit_bytes=limit, over=over)

    async def clean_attachments(self) -> CleanReport:
        """Delete attachment files past retention; their rows stay, marked `cleaned`."""
        report = await clean_attachments(
            self._repo,
            AttachmentStore(self.settings.attachments_path),
            now=self.clock.now(),
            retention_days=self.settings.attachment_retention_days,
        )
        if report.cleaned or report.errors:
            log.info("attachment retention: %s", report)
        return report

    async def daily(self) -> tuple[CleanReport, CapacityReport]:
        """The daily chores: attachment retention first, then the capacity sentinel."""
        return await self.clean_attachments(), await self.check_capacity()

    # --- status ----------------------------------------------------------------------

    async def status_lines(self, scope: str = "") -> dict[str, str]:
        """`/status` lines (last backup, sizes, failing alerts); the same for every chat."""
        return status_lines(await self.status(), self.zone)

    async def status(self) -> OpsStatus:
        history = await self.backups()
        last = history[-1] if history else None
        last_ok = next((m for m in reversed(history) if m.ok), None)
        failing = getattr(self.alerts, "failing", ())
        return OpsStatus(
            last_backup=None
            if last is None
            else BackupStatus(
                file=last.file,
                created_at=last.created_at,
                ok=last.ok,
                failed_checks=tuple(c.name for c in last.failed_checks),
                size_bytes=last.size_bytes,
            ),
            last_ok_backup_at=last_ok.created_at if last_ok else None,
            backups_kept=sum(1 for m in history if m.ok),
            sizes=await self.sizes(),
            capacity_limit_bytes=self.settings.capacity_limit_bytes,
            failing_alerts=tuple(failing),
        )
