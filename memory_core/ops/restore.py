"""Restoring a backup: verify it, write it into a NEW file, verify that file.

The live database is never written: a target that exists, or that is the live file
(or its -wal/-shm), is refused. Swapping the restored file in is the operator's
step, done with the bot stopped. Blocking: run in a thread.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memory_core.errors import NotFound, StorageError, ValidationError
from memory_core.settings import Settings
from memory_core.storage import ops_repo
from memory_core.storage.schema import TRUTH_TABLES

from .backup import count_shortfalls, verify_backup
from .manifest import BackupManifest, Check, list_manifests


@dataclass(frozen=True, slots=True)
class RestoreReport:
    backup: Path
    target: Path | str
    """A new SQLite file, or the PostgreSQL database (host/name) a dump went into."""
    checks: tuple[Check, ...]
    """The backup's checks, then the restored file's."""
    written: bool
    counts: dict[str, int]

    @property
    def ok(self) -> bool:
        return self.written and all(c.ok for c in self.checks)


def find_backup(spec: str, folder: Path) -> Path:
    """A backup named on the command line: a path, a file or name in `folder`, or
    `latest` (the newest verified one). Raises NotFound."""
    if spec == "latest":
        verified = [m for m in list_manifests(folder) if m.ok]
        if not verified:
            raise NotFound(f"no verified backup in {folder}")
        return folder / verified[-1].file
    for candidate in (Path(spec), folder / spec, folder / f"{spec}.db", folder / f"{spec}.dump"):
        if candidate.is_file():
            return candidate
    raise NotFound(f"no backup {spec!r} (looked in {folder})")


def live_database_path(settings: Settings) -> Path | None:
    """The SQLite file the bot uses (None for a non-SQLite URL)."""
    if not settings.database_url:
        return settings.database_path
    if not settings.database_url.startswith("sqlite"):
        return None
    _, _, rest = settings.database_url.partition(":///")
    return Path(rest) if rest and rest != ":memory:" else None


def refuse_target(target: Path, live_database: Path | None) -> None:
    """Raise ValidationError unless `target` is a new file away from the live database."""
    if target.exists():
        raise ValidationError(f"{target} already exists: restore only writes a new file")
    if live_database is not None:
        live = live_database.resolve()
        forbidden = {live, live.with_name(live.name + "-wal"), live.with_name(live.name + "-shm")}
        if target.resolve() in forbidden:
            raise ValidationError(f"{target} is the live database: restore writes a new file")


def restore_backup(backup: Path, target: Path, *, live_database: Path | None) -> RestoreReport:
    refuse_target(target, live_database)
    checks, manifest = verify_backup(backup)
    if not all(c.ok for c in checks):
        return RestoreReport(backup, target, tuple(checks), written=False, counts={})

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    try:
        ops_repo.copy_database(backup, partial)
        refuse_target(target, live_database)  # nothing appeared meanwhile
        os.replace(partial, target)
    except (StorageError, OSError) as exc:
        partial.unlink(missing_ok=True)
        checks.append(Check("restore", False, str(exc)))
        return RestoreReport(backup, target, tuple(checks), written=False, counts={})

    problems = ops_repo.integrity_problems(target)
    checks.append(Check("restored integrity", not problems, "; ".join(problems[:5]) or "ok"))
    counts: dict[str, int] = {}
    try:
        counts = ops_repo.count_rows(target, TRUTH_TABLES)
        checks.append(restored_counts(counts, manifest))
    except StorageError as exc:
        checks.append(Check("restored counts", False, str(exc)))
    return RestoreReport(backup, target, tuple(checks), written=True, counts=counts)


def restored_counts(counts: Mapping[str, int], manifest: BackupManifest | None) -> Check:
    """The restored truth tables against the counts the backup's manifest recorded."""
    expected = manifest.backup_counts if manifest is not None else {}
    missing = count_shortfalls(counts, at_least={}, exactly=expected)
    return Check("restored counts", not missing, "; ".join(missing) or "match")
