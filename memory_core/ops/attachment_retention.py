"""Attachment retention: files first seen more than N days ago are deleted from disk;
their rows stay, marked `cleaned`, so every message still says what it carried.

Files go first, then the rows: a crash in between leaves rows that the next run
marks (deleting a missing file is a no-op), never a `cleaned` row with a file left.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memory_core.archive.store import AttachmentStore
from memory_core.storage import OpsRepo, StoredAttachment

log = logging.getLogger("yuji.ops")

CHUNK = 500


@dataclass(frozen=True, slots=True)
class CleanReport:
    cleaned: int
    """Rows marked `cleaned`."""
    bytes_freed: int
    missing: int
    """Rows whose file was already gone."""
    errors: int = 0
    """Files that could not be deleted (their rows stay `stored`, retried next run)."""


async def clean_attachments(
    repo: OpsRepo, store: AttachmentStore, *, now: datetime, retention_days: int
) -> CleanReport:
    if retention_days <= 0:
        return CleanReport(0, 0, 0)
    cutoff = now - timedelta(days=retention_days)
    total = _Tally()
    after_id = 0
    while True:
        stale = await repo.stored_before(cutoff, after_id=after_id, limit=CHUNK)
        if not stale:
            break
        after_id = stale[-1].id
        tally = await asyncio.to_thread(_delete_files, store, stale)
        total.cleaned += await repo.mark_cleaned(tally.done, now)
        total.freed += tally.freed
        total.missing += tally.missing
        total.errors += tally.errors
    return CleanReport(total.cleaned, total.freed, total.missing, total.errors)


@dataclass(slots=True)
class _Tally:
    done: list[int] = field(default_factory=list[int])
    cleaned: int = 0
    freed: int = 0
    missing: int = 0
    errors: int = 0


def _delete_files(store: AttachmentStore, rows: list[StoredAttachment]) -> _Tally:
    tally = _Tally()
    for row in rows:
        try:
            path = store.path_for(row.sha256)
            size = path.stat().st_size
            path.unlink()
        except (ValueError, FileNotFoundError):  # not a digest, or already gone
            tally.missing += 1
        except OSError as exc:
            tally.errors += 1
            log.warning("could not delete attachment file %s: %s", row.sha256, exc)
            continue
        else:
            tally.freed += size
        tally.done.append(row.id)
    return tally
