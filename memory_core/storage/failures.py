"""SQLite's errors translated into the error tree, in this one place.

Decided by SQLite's (extended) result code, never by the message text: a trigger's
`RAISE(ABORT, ...)` (every trigger of the schema guards the append-only tables) is
`AppendOnlyViolation`, any other constraint `ConstraintViolation`, a held lock
`StorageBusy`, a full disk `StorageFull`, and a file that cannot be read or written
`StorageError`. Anything else (a bad statement, a missing table) is a bug, not a
storage failure, and is left as it is.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Generator
from contextlib import contextmanager

from sqlalchemy.exc import DBAPIError

from memory_core.errors import (
    AppendOnlyViolation,
    ConstraintViolation,
    StorageBusy,
    StorageError,
    StorageFull,
)

_SQLITE_CONSTRAINT_TRIGGER = 1811  # sqlite3 names it only from Python 3.11.4 on
_BY_PRIMARY_CODE: dict[int, type[StorageError]] = {
    sqlite3.SQLITE_CONSTRAINT: ConstraintViolation,
    sqlite3.SQLITE_BUSY: StorageBusy,
    sqlite3.SQLITE_LOCKED: StorageBusy,
    sqlite3.SQLITE_FULL: StorageFull,
    sqlite3.SQLITE_IOERR: StorageError,
    sqlite3.SQLITE_READONLY: StorageError,
    sqlite3.SQLITE_CORRUPT: StorageError,
    sqlite3.SQLITE_CANTOPEN: StorageError,
    sqlite3.SQLITE_NOTADB: StorageError,
}


def sqlite_error(exc: BaseException) -> sqlite3.Error | None:
    """The driver's `sqlite3.Error` behind `exc` (SQLAlchemy wraps it), if there is one."""
    inner = exc.orig if isinstance(exc, DBAPIError) else exc
    return inner if isinstance(inner, sqlite3.Error) else None


def error_class(exc: BaseException) -> type[StorageError] | None:
    """The class of the tree that `exc` is, or None when it is no storage failure."""
    error = sqlite_error(exc)
    if error is None:
        return None
    code = error.sqlite_errorcode
    if code == _SQLITE_CONSTRAINT_TRIGGER:
        return AppendOnlyViolation
    return _BY_PRIMARY_CODE.get(code & 0xFF)


def translated(exc: BaseException, doing: str | None = None) -> StorageError | None:
    """`exc` as an error of the tree (None when it is no storage failure).

    `doing` says what was being done; the driver's own words follow it."""
    cls = error_class(exc)
    if cls is None:
        return None
    error = sqlite_error(exc)
    return cls(f"{doing}: {error}" if doing else str(error))


def storage_error(exc: sqlite3.Error, doing: str) -> StorageError:
    """`exc` as an error of the tree, `StorageError` itself when no narrower one fits.

    For whole-file work (backups, checks), where any failure of SQLite is one of storage."""
    return translated(exc, doing) or StorageError(f"{doing}: {exc}")


@contextmanager
def translating() -> Generator[None]:
    """Re-raise SQLAlchemy's wrapped storage failures as errors of the tree."""
    try:
        yield
    except DBAPIError as exc:
        error = translated(exc)
        if error is None:
            raise
        raise error from exc
