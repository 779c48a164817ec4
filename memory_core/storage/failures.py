"""The database's errors translated into the error tree, in this one place.

Decided by SQLite's (extended) result code or PostgreSQL's SQLSTATE, never by the
message text: a trigger guarding an append-only table (SQLite's `RAISE(ABORT, ...)`,
PostgreSQL's `APPEND_ONLY_SQLSTATE`) is `AppendOnlyViolation`, any other constraint
`ConstraintViolation`, a held lock `StorageBusy`, a full disk `StorageFull`, a server
that cannot be reached `StorageUnavailable`, and a file or server that cannot be read
or written `StorageError`. Anything else (a bad
statement, a missing table) is a bug, not a storage failure, and is left as it is.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Generator
from contextlib import contextmanager
from typing import Literal

from sqlalchemy.exc import DBAPIError, StatementError

from memory_core.errors import (
    AppendOnlyViolation,
    ConstraintViolation,
    StorageBusy,
    StorageError,
    StorageFull,
    StorageUnavailable,
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


APPEND_ONLY_SQLSTATE = "YJ001"
"""The SQLSTATE the PostgreSQL append-only triggers raise (migration 0016)."""
_BY_SQLSTATE: dict[str, type[StorageError]] = {
    APPEND_ONLY_SQLSTATE: AppendOnlyViolation,
    "55P03": StorageBusy,  # lock_not_available (lock_timeout)
    "40001": StorageBusy,  # serialization_failure
    "40P01": StorageBusy,  # deadlock_detected
    "57014": StorageBusy,  # query_canceled (statement_timeout)
    "53100": StorageFull,  # disk_full
    "53300": StorageUnavailable,  # too_many_connections
    "57P01": StorageUnavailable,  # admin_shutdown
    "57P02": StorageUnavailable,  # crash_shutdown
    "57P03": StorageUnavailable,  # cannot_connect_now (starting up, in recovery)
}
_BY_SQLSTATE_CLASS: dict[str, type[StorageError]] = {
    "23": ConstraintViolation,  # integrity constraint violation
    "08": StorageUnavailable,  # connection exception
    "53": StorageError,  # insufficient resources
    "57": StorageError,  # operator intervention (a server shutting down)
    "58": StorageError,  # system error (I/O)
    "XX": StorageError,  # internal error (a corrupt page)
}


def _sqlstate(exc: BaseException) -> str | None:
    inner = exc.orig if isinstance(exc, DBAPIError) else exc
    state = getattr(inner, "sqlstate", None)
    return state if isinstance(state, str) and len(state) == 5 else None


def sqlite_error(exc: BaseException) -> sqlite3.Error | None:
    """The driver's `sqlite3.Error` behind `exc` (SQLAlchemy wraps it), if there is one."""
    inner = exc.orig if isinstance(exc, DBAPIError) else exc
    return inner if isinstance(inner, sqlite3.Error) else None


def error_class(exc: BaseException) -> type[StorageError] | None:
    """The class of the tree that `exc` is, or None when it is no storage failure."""
    error = sqlite_error(exc)
    if error is None:
        state = _sqlstate(exc)
        if state is None:
            # A connection SQLAlchemy saw die (asyncpg's "connection is closed").
            lost = isinstance(exc, DBAPIError) and exc.connection_invalidated
            return StorageUnavailable if lost else None
        return _BY_SQLSTATE.get(state) or _BY_SQLSTATE_CLASS.get(state[:2])
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
    error: BaseException = sqlite_error(exc) or (
        exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    )
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


WriteFailure = Literal["transient", "row", "unknown"]
"""How a refused write may end: `transient` (the store failed, not the row: tried again
unchanged it may pass), `row` (the row itself is refused: tried again it fails again),
`unknown` (neither could be told; the caller retries a few times, then gives up)."""

_ROW_SQLITE_CODES = frozenset(
    {sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_RANGE}
)
_ROW_SQLSTATE_CLASSES = frozenset({"22", "23"})  # data exception, integrity constraint


def write_failure(exc: BaseException) -> WriteFailure:
    """Whether a write that raised `exc` is worth trying again unchanged. Pure.

    Retried (`transient`): every failure of the store as a whole (the error tree's
    `StorageError` but a constraint: busy, locked, full, unreachable, I/O, read-only,
    closed), a socket error, a timeout. Refused for good (`row`): a constraint the row
    breaks, a value the database cannot hold (SQLSTATE class 22: bad encoding, a NUL
    byte, out of range; SQLite's too big / mismatch / range), a value Python cannot
    encode (`ValueError`, `TypeError`)."""
    if isinstance(exc, ConstraintViolation):
        return "row"
    if isinstance(exc, StorageError):
        return "transient"
    if isinstance(exc, DBAPIError):
        cls = error_class(exc)
        if cls is not None:
            return "row" if issubclass(cls, ConstraintViolation) else "transient"
        error = sqlite_error(exc)
        if error is not None and error.sqlite_errorcode & 0xFF in _ROW_SQLITE_CODES:
            return "row"
        state = _sqlstate(exc)
        if state is not None and state[:2] in _ROW_SQLSTATE_CLASSES:
            return "row"
        return "unknown"
    if isinstance(exc, StatementError) and exc.orig is not None:
        return write_failure(exc.orig)  # a parameter that failed to bind
    if isinstance(exc, OSError):  # TimeoutError and ConnectionError included
        return "transient"
    if isinstance(exc, (ValueError, TypeError)):  # UnicodeError included
        return "row"
    return "unknown"
