"""Files a killed backup leaves behind, and sweeping them.

A backup writes `<name>.db.partial` (`.dump.partial` on PostgreSQL), renames it to
`<name>.db` (`.dump`), checks it (the drill
copies it into a `.drill-*` folder beside it) and writes `<name>.json` last, through a
`.part-*` temporary file. A process killed on the way leaves some of these and no
manifest, so retention (which deletes only what a manifest names) never sees them.

An orphan is such a file with no manifest. It is removed once older than
`backup_orphan_after_s`, longer than a running backup can take, so a backup of
another process (the CLI while the bot runs) is never swept from under it. Blocking:
run in a thread.
"""

from __future__ import annotations

import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from .capacity import human_bytes
from .manifest import PREFIX, TEMP_PREFIX

log = logging.getLogger("yuji.ops")

DRILL_PREFIX = ".drill-"


@dataclass(frozen=True, slots=True)
class Orphan:
    name: str
    size_bytes: int
    age_s: float


def find_orphans(folder: Path, *, now_s: float | None = None) -> list[Orphan]:
    """Every file or folder in `folder` a backup left without a manifest, oldest first."""
    if not folder.is_dir():
        return []
    now_s = time.time() if now_s is None else now_s
    found: list[Orphan] = []
    for path in folder.iterdir():
        if not _is_orphan(path):
            continue
        try:
            size, newest = _size_and_mtime(path)
        except OSError:  # removed meanwhile
            continue
        found.append(Orphan(path.name, size, max(0.0, now_s - newest)))
    return sorted(found, key=lambda o: (-o.age_s, o.name))


def sweep_orphans(folder: Path, *, older_than_s: float, now_s: float | None = None) -> list[Orphan]:
    """Remove the orphans older than `older_than_s`; logs and returns what went."""
    swept: list[Orphan] = []
    for orphan in find_orphans(folder, now_s=now_s):
        if orphan.age_s < older_than_s:
            continue
        path = folder / orphan.name
        try:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not remove orphaned backup file %s: %s", path, exc)
            continue
        swept.append(orphan)
    if swept:
        log.warning("removed %s", orphans_text(swept))
    return swept


def orphans_text(orphans: list[Orphan]) -> str:
    total = sum(o.size_bytes for o in orphans)
    names = ", ".join(o.name for o in orphans)
    return (
        f"{len(orphans)} orphaned backup files ({human_bytes(total)}), "
        f"left by killed backups: {names}"
    )


def _is_orphan(path: Path) -> bool:
    name = path.name
    if name.startswith((DRILL_PREFIX, TEMP_PREFIX)):
        return True
    if not name.startswith(PREFIX):
        return False
    if name.endswith((".db.partial", ".dump.partial")):
        return True
    return name.endswith((".db", ".dump")) and not path.with_suffix(".json").exists()


def _size_and_mtime(path: Path) -> tuple[int, float]:
    if not path.is_dir():
        stat = path.stat()
        return stat.st_size, stat.st_mtime
    size, newest = 0, path.stat().st_mtime
    for child in path.rglob("*"):
        stat = child.stat()
        size += stat.st_size if child.is_file() else 0
        newest = max(newest, stat.st_mtime)
    return size, newest
