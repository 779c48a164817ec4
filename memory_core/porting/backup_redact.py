"""`yuji backup --redact`: apply every finished forget request to the existing backups.

Each backup is copied beside itself, upgraded to the current schema (an older backup
gains the audit tables), given the same forgetting as the live database (through the
same audited path; image files are left alone: the live run already deleted those
that were only the person's), vacuumed so no free page keeps the old text, checked
like a fresh backup, and only then put in place of the old file with an updated
manifest. A backup that fails its checks is left as it was and reported.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from memory_core.clock import Clock
from memory_core.memories.service import Memories
from memory_core.ops.backup import verify_file
from memory_core.ops.manifest import (
    BackupManifest,
    Check,
    list_manifests,
    sha256_file,
    write_manifest,
)
from memory_core.settings import Settings
from memory_core.storage import migrate
from memory_core.storage.engine import Database
from memory_core.storage.memory_repo import MemoryRepo
from memory_core.storage.redaction_repo import ForgetRequest, RedactionRepo

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
            results.append(await _redact_one(path, manifest, settings, clock, done, folder))
    return results


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
        db = Database(f"sqlite+aiosqlite:///{work}")
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
            await repo.vacuum()
        finally:
            await db.dispose()
        checks, counts, revision = await asyncio.to_thread(verify_file, work, sha256=None)
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
    finally:
        _remove_work_files(work)


def _size(path: Path) -> int:
    return path.stat().st_size


def _remove_work_files(work: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
