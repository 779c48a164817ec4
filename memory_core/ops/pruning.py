"""Applying the retention policy to a backup folder, and mirroring verified backups.

Only files named by a readable manifest are ever deleted; a file yuji did not
describe (or a backup whose manifest is unreadable) is left alone. Blocking: run in
a thread.
"""

from __future__ import annotations

import logging
import os
import shutil
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from .manifest import BackupManifest, Check, list_manifests, sha256_file, write_manifest
from .retention import RetentionPolicy, select_kept

log = logging.getLogger("yuji.ops")

KEEP_FAILED = 1
"""The newest failed backups kept for inspection; older failures are removed."""


def prune(folder: Path, *, now: datetime, policy: RetentionPolicy, zone: ZoneInfo) -> list[str]:
    """Delete the backups the policy no longer keeps; returns the removed file names."""
    manifests = list_manifests(folder)
    verified = {m.file: m.created_at for m in manifests if m.ok}
    kept = set(select_kept(verified, now=now, policy=policy, zone=zone))
    failed = [m for m in manifests if not m.ok]
    kept.update(m.file for m in failed[-KEEP_FAILED:])
    removed: list[str] = []
    for manifest in manifests:
        if manifest.file in kept:
            continue
        try:
            (folder / manifest.file).unlink(missing_ok=True)
            (folder / f"{manifest.name}.json").unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not remove old backup %s: %s", manifest.file, exc)
            continue
        removed.append(manifest.file)
    return removed


def mirror(backup: Path, manifest: BackupManifest, mirror_dir: Path) -> Check:
    """Copy a verified backup and its manifest to the mirror folder, then re-hash it."""
    try:
        mirror_dir.mkdir(parents=True, exist_ok=True)
        target = mirror_dir / backup.name
        partial = mirror_dir / f"{backup.name}.partial"
        shutil.copyfile(backup, partial)
        if sha256_file(partial) != manifest.sha256:
            partial.unlink(missing_ok=True)
            return Check("mirror", False, f"the copy in {mirror_dir} differs from the backup")
        os.replace(partial, target)
        write_manifest(mirror_dir, manifest)
    except OSError as exc:
        return Check("mirror", False, f"{mirror_dir}: {exc}")
    return Check("mirror", True, str(mirror_dir))
