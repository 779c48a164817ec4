"""`yuji backup --redact`: apply every finished forget request to the existing backups.

Each backup is copied beside itself, upgraded to the current schema (an older backup
gains the audit tables), given the same forgetting as the live database (through the
same audited path; image files are left alone: the live run already deleted those
that were only the person's), vacuumed so no free page keeps the old text, checked
like a fresh backup, and only then put in place of the old file with an updated
manifest. A backup that fails its checks is left as it was and reported.

A PostgreSQL dump cannot be rewritten in place: it is restored into a scratch
database on the configured server, forgotten there the same way, dumped again and
checked like a fresh dump (its own restore drill) before it replaces the old file.
Without a PostgreSQL server configured (or a usable pg_dump) it is left as it was,
reported as still holding the person.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from memory_core.clock import Clock
from memory_core.errors import ConfigError, StorageError
from memory_core.memories.service import Memories
from memory_core.ops.backup import verify_file
from memory_core.ops.manifest import (
    BackupManifest,
    Check,
    list_manifests,
    sha256_file,
    write_manifest,
)
from memory_core.ops.pg_backup import is_dump, tools_for, verify_dump
from memory_core.settings import Settings
from memory_core.storage import (
    ForgetRequest,
    MemoryRepo,
    RedactionRepo,
    migrate,
    pg_dump,
    pg_server,
)
from memory_core.storage.engine import Database

from .forget import Forgetting

ACTOR = "backup-redact"


@dataclass(frozen=True, slots=True)
class RedactedBackup:
    path: Path
    ok: bool
    detail: str


async def redact_backups(
    settings: Settings, clock: Clock, requests: list[ForgetRequest]
) -> list[RedactedBackup]:
    done = [r for r in requests if r.state == "done"]
    folders = [settings.backups_dir]
    if settings.backup_mirror:
        folders.append(Path(settings.backup_mirror))
    results: list[RedactedBackup] = []
    for folder in folders:
        for manifest in list_manifests(folder):
            path = folder / manifest.file
            if not done:
                results.append(RedactedBackup(path, True, "no forget request to apply"))
                continue
            redact = _redact_dump if is_dump(path) else _redact_one
            results.append(await redact(path, manifest, settings, clock, done, folder))
    return results


async def _forget_in(
    url: str, settings: Settings, clock: Clock, requests: list[ForgetRequest]
) -> None:
    """Apply the forget requests to a backup's copy at `url` (upgraded to this schema)."""
    db = Database(url)
    try:
        await migrate.upgrade(db)
        # A backup's copy: its own database, so its own repository and services.
        memory_repo = MemoryRepo(db)
        memories = Memories(db, clock, settings, repo=memory_repo)
        forgetting = Forgetting(db, settings, clock, memories, memory_repo=memory_repo)
        for request in requests:
            await forgetting.forget_person(
                request.scope, request.user_id, requested_by=ACTOR, delete_files=False
            )
        repo = RedactionRepo(db)
        await repo.purge_log()
        if db.is_sqlite:
            await repo.vacuum()
    finally:
        await db.dispose()


async def _redact_dump(
    path: Path,
    manifest: BackupManifest,
    settings: Settings,
    clock: Clock,
    requests: list[ForgetRequest],
    folder: Path,
) -> RedactedBackup:
    url = settings.sqlalchemy_url
    work = path.with_name(path.name + ".redacting")
    try:
        tools = await tools_for(url, settings.pg_dump)
        async with pg_server.scratch_database(url, "redact") as scratch:
            await asyncio.to_thread(pg_dump.restore, tools, path, scratch)
            await _forget_in(scratch, settings, clock, requests)
            await asyncio.to_thread(pg_dump.dump, tools, scratch, work, snapshot=None)
        checks, counts, revision = await verify_dump(work, url, tools, sha256=None)
    except (ConfigError, StorageError) as exc:
        work.unlink(missing_ok=True)
        return RedactedBackup(path, False, f"left unchanged, still holds them: {exc}")
    try:
        return await _replace(path, work, manifest, folder, requests, checks, counts, revision)
    finally:
        work.unlink(missing_ok=True)


async def _redact_one(
    path: Path,
    manifest: BackupManifest,
    settings: Settings,
    clock: Clock,
    requests: list[ForgetRequest],
    folder: Path,
) -> RedactedBackup:
    work = path.with_name(path.name + ".redacting")
    await asyncio.to_thread(shutil.copyfile, path, work)
    try:
        await _forget_in(f"sqlite+aiosqlite:///{work}", settings, clock, requests)
        checks, counts, revision = await asyncio.to_thread(verify_file, work, sha256=None)
        return await _replace(path, work, manifest, folder, requests, checks, counts, revision)
    finally:
        _remove_work_files(work)


async def _replace(
    path: Path,
    work: Path,
    manifest: BackupManifest,
    folder: Path,
    requests: list[ForgetRequest],
    checks: list[Check],
    counts: dict[str, int],
    revision: str | None,
) -> RedactedBackup:
    """Put the checked rewrite `work` in place of `path`, with an updated manifest."""
    if not all(c.ok for c in checks):
        failed = ", ".join(f"{c.name}: {c.detail}" for c in checks if not c.ok)
        return RedactedBackup(path, False, f"left unchanged, the rewrite failed ({failed})")
    os.replace(work, path)
    updated = dataclasses.replace(
        manifest,
        checks=(*checks, Check("redacted", True, f"{len(requests)} forget request(s)")),
        backup_counts=counts,
        schema_revision=revision,
        size_bytes=_size(path),
        sha256=await asyncio.to_thread(sha256_file, path),
        ok=True,
    )
    write_manifest(folder, updated)
    return RedactedBackup(path, True, f"rewritten: {len(requests)} forget request(s) applied")


def _size(path: Path) -> int:
    return path.stat().st_size


def _remove_work_files(work: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
