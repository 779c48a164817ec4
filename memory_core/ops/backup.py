"""Verified backups: an online snapshot, then every check that makes it trustworthy.

`create_backup` (blocking; the service runs it in a thread):

1. snapshot — SQLite's online backup API copies the live file inside one read
   transaction, which also counts the truth tables: the live counts at the snapshot;
2. integrity — `PRAGMA integrity_check` of the copy;
3. counts — every truth table of the copy has at least the live rows;
4. drill — the copy is copied again to a temporary folder, its SHA-256 compared,
   opened, `quick_check`ed, and its truth tables counted.

Any failed check marks the backup failed in its manifest; the caller alerts.
`verify_backup` runs the same checks again later (before a restore).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from memory_core.errors import StorageError
from memory_core.storage import ops_repo
from memory_core.storage.backend_info import sqlite_bytes
from memory_core.storage.schema import TRUTH_TABLES

from .manifest import BackupManifest, Check, backup_name, read_manifest, sha256_file
from .orphans import DRILL_PREFIX

Snapshot = Callable[[Path, Path, Sequence[str]], dict[str, int]]
"""(live file, new target file, tables) -> live counts at the snapshot."""

BACKUP_ALERT_KEY = "backup"


def create_backup(
    source: Path,
    folder: Path,
    *,
    created_at: datetime,
    reason: str,
    now: Callable[[], datetime],
    snapshot: Snapshot = ops_repo.online_backup,
) -> BackupManifest:
    """Snapshot `source` into `folder` and check the copy. Never raises for a failed
    check or a failed snapshot: the returned manifest says what went wrong."""
    started = time.monotonic()
    folder.mkdir(parents=True, exist_ok=True)
    name = free_name(folder, backup_name(created_at))
    target = folder / f"{name}.db"
    partial = folder / f"{name}.db.partial"
    live_bytes = sqlite_bytes(source)

    base = BackupManifest(
        file=target.name,
        created_at=created_at,
        finished_at=created_at,
        reason=reason,
        ok=False,
        checks=(),
        live_bytes=live_bytes,
    )

    try:
        live_counts = snapshot(source, partial, TRUTH_TABLES)
        os.replace(partial, target)
    except (StorageError, OSError) as exc:
        partial.unlink(missing_ok=True)
        return base.finished([Check("snapshot", False, str(exc))], at=now(), started=started)

    checks = [Check("snapshot", True, f"{sum(live_counts.values())} truth rows")]
    sha = sha256_file(target)
    more, backup_counts, revision = verify_file(target, sha256=sha, at_least=live_counts)
    checks += more
    base = replace(
        base,
        live_counts=live_counts,
        backup_counts=backup_counts,
        size_bytes=target.stat().st_size,
        sha256=sha,
        schema_revision=revision,
    )
    return base.finished(checks, at=now(), started=started)


def verify_file(
    path: Path,
    *,
    sha256: str | None,
    at_least: Mapping[str, int] | None = None,
    exactly: Mapping[str, int] | None = None,
) -> tuple[list[Check], dict[str, int], str | None]:
    """Integrity, counts and the restore drill of one backup file.

    Returns the checks, the file's truth-table counts ({} if unreadable) and its
    schema revision."""
    checks: list[Check] = []
    if sha256 is not None:
        actual = sha256_file(path)
        checks.append(Check("sha256", actual == sha256, _hash_detail(actual, sha256)))

    problems = ops_repo.integrity_problems(path)
    checks.append(Check("integrity", not problems, "ok" if not problems else _short(problems)))

    counts: dict[str, int] = {}
    try:
        counts = ops_repo.count_rows(path, TRUTH_TABLES)
        shortfalls = count_shortfalls(counts, at_least=at_least or {}, exactly=exactly or {})
        checks.append(Check("counts", not shortfalls, _short(shortfalls) or _total(counts)))
    except StorageError as exc:
        checks.append(Check("counts", False, str(exc)))

    drill, revision = restore_drill(path, expected=counts or None, sha256=sha256)
    checks.append(drill)
    return checks, counts, revision


def _hash_detail(actual: str, expected: str) -> str:
    """The hash itself, so an operator can compare it with a copy made elsewhere."""
    return actual if actual == expected else f"mismatch: file {actual}, manifest {expected or '-'}"


def restore_drill(
    path: Path, *, expected: Mapping[str, int] | None, sha256: str | None
) -> tuple[Check, str | None]:
    """Copy a backup to a temporary folder, open it, and count the key tables.

    Passes when the copy is byte-identical (if `sha256` is given), opens, passes
    `quick_check`, carries a schema revision, and every truth table counts as
    `expected` (if given)."""
    # Beside the backup (not in /tmp, often memory): a kill leaves it where the orphan
    # sweep finds it.
    beside = path.parent if os.access(path.parent, os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix=DRILL_PREFIX, dir=beside) as tmp:
        copy = Path(tmp) / "restored.db"
        try:
            shutil.copyfile(path, copy)
            if sha256 is not None and sha256_file(copy) != sha256:
                return Check("drill", False, "the copy differs from the manifest's SHA-256"), None
            problems = ops_repo.integrity_problems(copy, quick=True)
            if problems:
                return Check("drill", False, f"quick_check: {_short(problems)}"), None
            revision = ops_repo.schema_revision(copy)
            if revision is None:
                return Check("drill", False, "no schema revision"), None
            counts = ops_repo.count_rows(copy, TRUTH_TABLES)
        except (StorageError, OSError) as exc:
            return Check("drill", False, str(exc)), None
    if expected is not None and counts != dict(expected):
        return Check("drill", False, f"counts {counts} != {dict(expected)}"), revision
    return Check("drill", True, f"opened at revision {revision}, {_total(counts)}"), revision


def verify_backup(path: Path) -> tuple[list[Check], BackupManifest | None]:
    """Check a backup file again, against its manifest when there is one."""
    manifest = read_manifest(path)
    if not path.is_file():
        return [Check("file", False, f"no backup file at {path}")], manifest
    if manifest is None:
        checks, _, _ = verify_file(path, sha256=None)
        return [Check("manifest", False, "no manifest: nothing to compare with"), *checks], None
    checks, _, _ = verify_file(path, sha256=manifest.sha256, exactly=manifest.backup_counts)
    if not manifest.ok:
        checks.insert(0, Check("manifest", False, "this backup failed its checks when made"))
    return checks, manifest


def count_shortfalls(
    counts: Mapping[str, int],
    *,
    at_least: Mapping[str, int],
    exactly: Mapping[str, int],
) -> list[str]:
    """Pure: which tables miss rows compared with the live snapshot or a manifest."""
    problems: list[str] = []
    for table, live in at_least.items():
        got = counts.get(table)
        if got is None or got < live:
            problems.append(f"{table}: {got} < {live}")
    for table, want in exactly.items():
        got = counts.get(table)
        if got != want:
            problems.append(f"{table}: {got} != {want}")
    return problems


BACKUP_SUFFIXES = (".db", ".dump")
"""A SQLite file backup, a PostgreSQL dump (pg_backup.py)."""


def free_name(folder: Path, name: str) -> str:
    """`name`, or `name-2`, `name-3`...: the first no file of any backup kind uses."""
    suffixes = (".json", *BACKUP_SUFFIXES, *(f"{s}.partial" for s in BACKUP_SUFFIXES))
    candidate, n = name, 1
    while any((folder / f"{candidate}{s}").exists() for s in suffixes):
        n += 1
        candidate = f"{name}-{n}"
    return candidate


def _total(counts: Mapping[str, int]) -> str:
    return f"{sum(counts.values())} truth rows"


def _short(items: Sequence[str], limit: int = 5) -> str:
    shown = "; ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")
