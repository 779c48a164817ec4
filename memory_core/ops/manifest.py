"""A backup's manifest: the JSON file beside each backup that says what it is and
whether it passed its checks.

`data/backups/yuji-20261120T120000Z.db` has `yuji-20261120T120000Z.json`. A backup
without a manifest (a crash half-way) is never trusted nor pruned automatically.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from memory_core.clock import as_utc

log = logging.getLogger("yuji.ops")

PREFIX = "yuji-"
MANIFEST_VERSION = 1
TEMP_PREFIX = ".part-"
"""A manifest being written (renamed into place when complete)."""


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    """snapshot | integrity | counts | drill | sha256 | revision"""
    ok: bool
    detail: str = ""


@dataclass(frozen=True, slots=True)
class BackupManifest:
    file: str
    """The backup's file name, in the same folder as the manifest: `<name>.db` (SQLite)
    or `<name>.dump` (PostgreSQL's custom format)."""
    created_at: datetime
    """The instant of the snapshot."""
    finished_at: datetime
    reason: str
    ok: bool
    checks: tuple[Check, ...]
    live_counts: dict[str, int] = field(default_factory=dict[str, int])
    """Truth-table row counts of the live database at the snapshot."""
    backup_counts: dict[str, int] = field(default_factory=dict[str, int])
    size_bytes: int = 0
    live_bytes: int = 0
    sha256: str = ""
    schema_revision: str | None = None
    duration_s: float = 0.0
    mirrored_to: str | None = None

    def finished(self, checks: Sequence[Check], *, at: datetime, started: float) -> BackupManifest:
        """This manifest once its checks have run: ok when every one passed, with the
        finish instant and the time taken since `started` (`time.monotonic()`)."""
        return replace(
            self,
            ok=all(c.ok for c in checks),
            checks=tuple(checks),
            finished_at=at,
            duration_s=round(time.monotonic() - started, 3),
        )

    @property
    def name(self) -> str:
        return self.file.removesuffix(".db").removesuffix(".dump")

    @property
    def failed_checks(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.ok)

    def to_json(self) -> str:
        data = asdict(self)
        data["version"] = MANIFEST_VERSION
        data["created_at"] = self.created_at.isoformat()
        data["finished_at"] = self.finished_at.isoformat()
        return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True)

    @staticmethod
    def from_json(text: str) -> BackupManifest:
        data: dict[str, Any] = json.loads(text)
        return BackupManifest(
            file=str(data["file"]),
            created_at=as_utc(datetime.fromisoformat(data["created_at"])),
            finished_at=as_utc(datetime.fromisoformat(data["finished_at"])),
            reason=str(data.get("reason", "")),
            ok=bool(data["ok"]),
            checks=tuple(
                Check(name=str(c["name"]), ok=bool(c["ok"]), detail=str(c.get("detail", "")))
                for c in data.get("checks", [])
            ),
            live_counts={str(k): int(v) for k, v in data.get("live_counts", {}).items()},
            backup_counts={str(k): int(v) for k, v in data.get("backup_counts", {}).items()},
            size_bytes=int(data.get("size_bytes", 0)),
            live_bytes=int(data.get("live_bytes", 0)),
            sha256=str(data.get("sha256", "")),
            schema_revision=data.get("schema_revision"),
            duration_s=float(data.get("duration_s", 0.0)),
            mirrored_to=data.get("mirrored_to"),
        )


def backup_name(instant: datetime) -> str:
    return f"{PREFIX}{as_utc(instant):%Y%m%dT%H%M%S}Z"


def manifest_path(backup: Path) -> Path:
    return backup.with_suffix(".json")


def write_manifest(folder: Path, manifest: BackupManifest) -> Path:
    path = folder / f"{manifest.name}.json"
    atomic_write_text(path, manifest.to_json())
    return path


def read_manifest(backup: Path) -> BackupManifest | None:
    path = manifest_path(backup)
    if not path.is_file():
        return None
    try:
        return BackupManifest.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("unreadable backup manifest %s: %s", path, exc)
        return None


def list_manifests(folder: Path) -> list[BackupManifest]:
    """Every readable manifest in `folder`, oldest first."""
    if not folder.is_dir():
        return []
    found = [read_manifest(p.with_suffix(".db")) for p in folder.glob(f"{PREFIX}*.json")]
    return sorted((m for m in found if m is not None), key=lambda m: (m.created_at, m.file))


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def atomic_write_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TEMP_PREFIX)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
