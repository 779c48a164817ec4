"""Verified backups of a PostgreSQL store: `pg_dump --format=custom` into the same
folder, with the same manifest and checks as SQLite's file backups (backup.py).

1. snapshot — one REPEATABLE READ transaction exports its snapshot and counts the
   truth tables in it; `pg_dump --snapshot` dumps exactly that snapshot, so the live
   counts at the snapshot are the dump's (as SQLite's online backup reads them);
2. integrity — the dump's table of contents reads (`pg_restore --list`);
3. counts and drill — the dump is restored into a scratch database made on the same
   server (`yuji_drill_<random>`, dropped afterwards, also on failure), its truth
   tables counted against the live counts (or, verifying later, the manifest's) and
   its schema revision read.

The role needs CREATEDB for the drill; without it the drill fails with the server's
words and the backup is marked failed (a dump never restored is not a verified one).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from memory_core.errors import ConfigError, StorageError, ValidationError
from memory_core.storage import Tools, find_tools, pg_dump, pg_server
from memory_core.storage.schema import TRUTH_TABLES

from .backup import count_shortfalls, free_name
from .manifest import BackupManifest, Check, backup_name, read_manifest, sha256_file
from .restore import RestoreReport, restored_counts

DUMP_SUFFIX = ".dump"


async def create_pg_backup(
    url: str,
    folder: Path,
    tools: Tools,
    *,
    created_at: datetime,
    reason: str,
    now: Callable[[], datetime],
) -> BackupManifest:
    """Dump `url`'s database into `folder` and check the dump. Never raises for a
    failed check or a failed dump: the returned manifest says what went wrong."""
    started = time.monotonic()
    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    name = free_name(folder, backup_name(created_at))
    target = folder / f"{name}{DUMP_SUFFIX}"
    partial = folder / f"{name}{DUMP_SUFFIX}.partial"
    base = BackupManifest(
        file=target.name,
        created_at=created_at,
        finished_at=created_at,
        reason=reason,
        ok=False,
        checks=(),
    )

    try:
        async with pg_server.connected(url) as conn:
            live_bytes = await pg_server.database_size(conn)
        async with pg_server.exported_snapshot(url, TRUTH_TABLES) as (snapshot, live_counts):
            await asyncio.to_thread(pg_dump.dump, tools, url, partial, snapshot=snapshot)
        os.replace(partial, target)
    except (StorageError, OSError) as exc:
        partial.unlink(missing_ok=True)
        return base.finished([Check("snapshot", False, str(exc))], at=now(), started=started)

    checks = [Check("snapshot", True, f"{sum(live_counts.values())} truth rows (pg_dump)")]
    sha = await asyncio.to_thread(sha256_file, target)
    more, backup_counts, revision = await verify_dump(
        target, url, tools, sha256=sha, at_least=live_counts
    )
    checks += more
    base = replace(
        base,
        live_counts=live_counts,
        backup_counts=backup_counts,
        live_bytes=live_bytes,
        size_bytes=target.stat().st_size,
        sha256=sha,
        schema_revision=revision,
    )
    return base.finished(checks, at=now(), started=started)


async def verify_dump(
    path: Path,
    url: str,
    tools: Tools,
    *,
    sha256: str | None,
    at_least: Mapping[str, int] | None = None,
    exactly: Mapping[str, int] | None = None,
) -> tuple[list[Check], dict[str, int], str | None]:
    """Hash, table of contents, and the restore drill on `url`'s server.

    Returns the checks, the restored truth-table counts ({} if it did not restore)
    and the dump's schema revision."""
    checks: list[Check] = []
    if sha256 is not None:
        actual = await asyncio.to_thread(sha256_file, path)
        detail = (
            actual if actual == sha256 else f"mismatch: file {actual}, manifest {sha256 or '-'}"
        )
        checks.append(Check("sha256", actual == sha256, detail))
    try:
        entries = await asyncio.to_thread(pg_dump.list_entries, tools, path)
        checks.append(Check("integrity", True, f"{entries} entries (pg_restore --list)"))
    except StorageError as exc:
        checks.append(Check("integrity", False, str(exc)))
        return checks, {}, None

    counts: dict[str, int] = {}
    revision: str | None = None
    try:
        async with pg_server.scratch_database(url, "drill") as scratch:
            await asyncio.to_thread(pg_dump.restore, tools, path, scratch)
            async with pg_server.connected(scratch) as conn:
                counts = await pg_server.count_rows(conn, TRUTH_TABLES)
                revision = await pg_server.schema_revision(conn)
    except StorageError as exc:
        checks.append(Check("counts", False, "not restored"))
        checks.append(Check("drill", False, str(exc)))
        return checks, {}, None
    shortfalls = count_shortfalls(counts, at_least=at_least or {}, exactly=exactly or {})
    total = f"{sum(counts.values())} truth rows"
    checks.append(Check("counts", not shortfalls, "; ".join(shortfalls[:5]) or total))
    if revision is None:
        checks.append(Check("drill", False, "restored, but no schema revision"))
    else:
        checks.append(
            Check(
                "drill", True, f"restored into a scratch database at revision {revision}, {total}"
            )
        )
    return checks, counts, revision


async def verify_pg_backup(
    path: Path, url: str, tools: Tools
) -> tuple[list[Check], BackupManifest | None]:
    """A dump checked again, against its manifest when there is one (backup.verify_backup's
    twin)."""
    manifest = await asyncio.to_thread(read_manifest, path)
    if not await asyncio.to_thread(path.is_file):
        return [Check("file", False, f"no backup file at {path}")], manifest
    if manifest is None:
        checks, _, _ = await verify_dump(path, url, tools, sha256=None)
        return [Check("manifest", False, "no manifest: nothing to compare with"), *checks], None
    checks, _, _ = await verify_dump(
        path, url, tools, sha256=manifest.sha256, exactly=manifest.backup_counts
    )
    if not manifest.ok:
        checks.insert(0, Check("manifest", False, "this backup failed its checks when made"))
    return checks, manifest


async def refuse_pg_target(target_url: str) -> None:
    """Raise ValidationError unless the target database exists and holds nothing."""
    async with pg_server.connected(target_url) as conn:
        objects = await pg_server.user_relations(conn)
    if objects:
        raise ValidationError(
            f"{pg_server.label(target_url)} is not empty ({objects} tables, sequences or "
            "extensions): restore writes only into an empty database"
        )


async def restore_pg_backup(backup: Path, target_url: str, tools: Tools) -> RestoreReport:
    """Verify the dump (its drill on the target's server), restore it into the empty
    database `target_url`, and count what arrived against the manifest."""
    target = pg_server.label(target_url)
    await refuse_pg_target(target_url)
    checks, manifest = await verify_pg_backup(backup, target_url, tools)
    if not all(c.ok for c in checks):
        return RestoreReport(backup, target, tuple(checks), written=False, counts={})
    await refuse_pg_target(target_url)  # nothing appeared meanwhile
    try:
        await asyncio.to_thread(pg_dump.restore, tools, backup, target_url)
    except StorageError as exc:
        checks.append(Check("restore", False, str(exc)))
        return RestoreReport(backup, target, tuple(checks), written=False, counts={})
    counts: dict[str, int] = {}
    try:
        async with pg_server.connected(target_url, autocommit=True) as conn:
            counts = await pg_server.count_rows(conn, TRUTH_TABLES)
            # pg_restore leaves the planner statistics out: gather them now, not when
            # autovacuum gets round to it (a fresh store's first questions would pay).
            await conn.exec_driver_sql("ANALYZE")
        checks.append(restored_counts(counts, manifest))
    except StorageError as exc:
        checks.append(Check("restored counts", False, str(exc)))
    return RestoreReport(backup, target, tuple(checks), written=True, counts=counts)


async def tools_for(url: str, configured: str) -> Tools:
    """pg_dump and pg_restore able to read `url`'s server (`configured`: YUJI_PG_DUMP)."""
    if not url.startswith("postgresql"):
        raise ConfigError(
            "a PostgreSQL dump needs a PostgreSQL server: set YUJI_DATABASE_URL (or --to) to one"
        )
    async with pg_server.connected(url) as conn:
        info = await pg_server.server_info(conn)
    return await asyncio.to_thread(find_tools, configured, info.version_num, info.version)


def is_dump(path: Path) -> bool:
    return path.name.endswith(DUMP_SUFFIX)
