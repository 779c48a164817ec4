"""The ops aggregate's SQL: whole-file SQLite work for backups, and attachment retention.

The file-level half is blocking `sqlite3` (run it in a thread): the online backup
API has no async driver, and the row counts of a backup must be read on the very
connection and snapshot the copy is taken from. The async half marks attachment
files as `cleaned` through the one writer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.errors import StorageError
from memory_core.storage.engine import BUSY_TIMEOUT_S
from memory_core.storage.failures import storage_error
from memory_core.storage.repository import Repository
from memory_core.storage.schema import attachments

# --- whole files (blocking) -----------------------------------------------------------


def _connect(path: Path, *, mode: str) -> sqlite3.Connection:
    """Open an existing file (`mode` "ro" or "rw"); a missing file is an error, never created."""
    if not path.is_file():
        raise StorageError(f"no database file at {path}")
    try:
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode={mode}",
            uri=True,
            timeout=BUSY_TIMEOUT_S,
            isolation_level=None,
            check_same_thread=False,
        )
    except sqlite3.Error as exc:
        raise storage_error(exc, f"cannot open {path}") from exc
    return conn


def _count(conn: sqlite3.Connection, tables: Sequence[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for table in tables:
        (n,) = conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()
        counts[table] = int(n)
    return counts


def online_backup(source: Path, target: Path, tables: Sequence[str]) -> dict[str, int]:
    """Copy `source` into the new file `target` with SQLite's online backup API.

    The copy is made in one step inside one read transaction, so it is a consistent
    snapshot even while other connections write (WAL readers never block writers).
    Returns the row counts of `tables` read in that same transaction: the live
    database "at the snapshot". The copy is left in rollback-journal mode, a single
    self-contained file.
    """
    if target.exists():
        raise StorageError(f"backup target {target} already exists")
    try:
        with closing(_connect(source, mode="rw")) as src:
            src.execute("BEGIN")
            try:
                counts = _count(src, tables)
                with closing(sqlite3.connect(target, isolation_level=None)) as dst:
                    src.backup(dst, pages=-1)
                    dst.execute("PRAGMA journal_mode=DELETE")
            finally:
                src.execute("ROLLBACK")
    except sqlite3.Error as exc:
        raise storage_error(exc, f"online backup of {source} failed") from exc
    return counts


def copy_database(source: Path, target: Path) -> None:
    """Write a new database file `target` from a (backup) file, page by page."""
    if target.exists():
        raise StorageError(f"{target} already exists")
    try:
        with (
            closing(_connect(source, mode="ro")) as src,
            closing(sqlite3.connect(target, isolation_level=None)) as dst,
        ):
            src.backup(dst, pages=-1)
            dst.execute("PRAGMA journal_mode=DELETE")
    except sqlite3.Error as exc:
        raise storage_error(exc, f"copying {source} to {target} failed") from exc


def integrity_problems(path: Path, *, quick: bool = False) -> list[str]:
    """`PRAGMA integrity_check` (or the faster `quick_check`) of a file: [] means "ok"."""
    pragma = "quick_check" if quick else "integrity_check"
    try:
        with closing(_connect(path, mode="ro")) as conn:
            rows = [str(r[0]) for r in conn.execute(f"PRAGMA {pragma}").fetchall()]
    except (sqlite3.Error, StorageError) as exc:
        return [f"cannot check: {exc}"]
    return [] if rows == ["ok"] else rows


def count_rows(path: Path, tables: Sequence[str]) -> dict[str, int]:
    try:
        with closing(_connect(path, mode="ro")) as conn:
            return _count(conn, tables)
    except sqlite3.Error as exc:
        raise storage_error(exc, f"cannot count rows of {path}") from exc


def schema_revision(path: Path) -> str | None:
    """The Alembic revision recorded in a database file (None if it has none)."""
    try:
        with closing(_connect(path, mode="ro")) as conn:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    except sqlite3.Error as exc:
        raise storage_error(exc, f"cannot read the schema revision of {path}") from exc
    return None if row is None else str(row[0])


# --- attachment retention (async, through the one writer) -----------------------------


@dataclass(frozen=True, slots=True)
class StoredAttachment:
    id: int
    sha256: str


class OpsRepo(Repository):
    async def stored_before(
        self, cutoff: datetime, *, after_id: int, limit: int, conn: AsyncConnection | None = None
    ) -> list[StoredAttachment]:
        """Attachments (id > `after_id`) whose file is on disk, first seen before `cutoff`."""
        query = (
            select(attachments.c.id, attachments.c.sha256)
            .where(
                attachments.c.status == "stored",
                attachments.c.first_seen < cutoff,
                attachments.c.id > after_id,
            )
            .order_by(attachments.c.id)
            .limit(limit)
        )
        async with self.reading(conn) as conn:
            rows = (await conn.execute(query)).all()
        return [StoredAttachment(id=r.id, sha256=r.sha256 or "") for r in rows]

    async def mark_cleaned(
        self, ids: Sequence[int], at: datetime, *, conn: AsyncConnection | None = None
    ) -> int:
        if not ids:
            return 0
        statement = (
            update(attachments)
            .where(attachments.c.id.in_(list(ids)), attachments.c.status == "stored")
            .values(status="cleaned", cleaned_at=at)
        )
        async with self.writing(conn) as conn:
            result = await conn.execute(statement)
        return int(result.rowcount)
