"""The database handle: one SQLite file in WAL mode, or a PostgreSQL database; one
writer at a time either way.

Reads run concurrently on pooled connections; every write goes through `write()`,
which serialises writers in this process with an asyncio lock and opens the
transaction with `BEGIN IMMEDIATE`, so a second process (the CLI, `yuji embed`)
waits on the busy timeout instead of failing half-way through a read-then-write.
Writers of different processes take turns: a writer waiting for the lock leaves a
mark (`yuji.db.writers/<pid>`), and a writer about to begin yields, for at most
`YIELD_MAX_S`, while another live process's mark is there, so a process writing
back to back (the bot archiving a burst) lets the CLI or `/remember` in between two
of its transactions instead of starving it (SQLite's busy handler alone is not
fair). A writer still locked out after the busy timeout (`YUJI_DB_BUSY_TIMEOUT_S`)
gets `StorageBusy`, one line saying so, before anything was written; a lock met
later in the transaction (a commit held back by a reader where SQLite fell back to a
rollback journal) is `StorageBusy` too, after the whole write was rolled back. Every other
failure of SQLite is translated into the error tree (`failures.py`): a write the disk has
no room for is rolled back and raised as `StorageFull`; `on_full` is told once when
writes start failing so, `on_writable` once when one succeeds again (the core wires
both to its alerts). Likewise a server that cannot be reached (refused, reset, shutting
down: `StorageUnavailable`, also for the socket errors asyncpg raises as they are):
`on_down` is told once when a read or write first meets it, `on_up` once when one
succeeds again.

On PostgreSQL the same single-writer model holds across every process of the
deployment: a write transaction's first statement takes one transaction-level
advisory lock (`WRITE_LOCK`), which PostgreSQL releases at commit, at rollback and
when the holder's connection dies. So every read-then-write of the repositories,
written for SQLite's one writer, stays correct with several bot processes on one
server, and no process can be left holding it. Reads run in REPEATABLE READ, the
one snapshot a SQLite read transaction gives.

One writer is finer than that: the archive writer's inserts touch only their own
chats' rows, so `write(chats=...)` holds the deployment's turn *shared* and each of
those chats' turns (`CHAT_LOCKS`, one key per chat) exclusively. Inserts of different
chats, from different processes, then run side by side; two of one chat still take
turns (so a chat's ids commit in order, which its consolidation watermark relies on,
and a message two accounts heard is decided once); every other writer still waits for
all of them and they for it. Each transaction takes every lock it will hold in its
first statement, the deployment's first and the chats' in one order, so no two of
them can wait for each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import time
from collections.abc import AsyncGenerator, Callable, Collection, Generator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from memory_core.errors import StorageBusy, StorageClosed, StorageFull, StorageUnavailable

from .failures import error_class, translating

BUSY_TIMEOUT_S = 30.0
YIELD_MAX_S = 2.0
"""Longest a writer waits for another process's waiting writer before it begins."""
YIELD_POLL_S = 0.01
ROOM_BYTES = 8 << 20
"""Free bytes on a full SQLite disk's file system before it counts as writable again."""
DRAIN_S = 5.0
"""Longest `dispose` waits for the reads and writes under way."""
WRITE_LOCK = 0x79756A69  # "yuji": the key of the deployment's one writer turn
CHAT_LOCKS = 0x6368  # "ch": the first of the two keys of a chat's writer turn
PG_WRITE_TURN = "SELECT /* write turn */ "
PG_SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"
"""How the transaction control statements on PostgreSQL begin (tests leave them out)."""


class Database:
    def __init__(
        self,
        url: str,
        *,
        busy_timeout_s: float = BUSY_TIMEOUT_S,
        on_full: Callable[[str], None] | None = None,
        on_writable: Callable[[], None] | None = None,
        on_down: Callable[[str], None] | None = None,
        on_up: Callable[[], None] | None = None,
    ) -> None:
        self.url = url
        self.busy_timeout_s = busy_timeout_s
        self.is_sqlite = url.startswith("sqlite")
        self.is_postgres = url.startswith("postgresql")
        if self.is_sqlite:
            path = self.sqlite_path
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
        self._marks = _Marks(self.sqlite_path) if self.sqlite_path is not None else None
        self.engine: AsyncEngine = create_async_engine(url, **_engine_options(url, busy_timeout_s))
        if self.is_sqlite:
            busy_ms = round(busy_timeout_s * 1000)

            def on_connect(dbapi_connection: Any, _record: Any) -> None:
                _sqlite_on_connect(dbapi_connection, busy_ms)

            event.listen(self.engine.sync_engine, "connect", on_connect)
        self._write_lock = asyncio.Lock()
        self._closed = False
        self._active = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self.on_full = on_full
        self.on_writable = on_writable
        self.full = False
        """The last write failed for want of room."""
        self.on_down = on_down
        self.on_up = on_up
        self.down = False
        """The last read or write could not reach the server."""

    @property
    def sqlite_path(self) -> Path | None:
        if not self.is_sqlite:
            return None
        _, _, rest = self.url.partition(":///")
        if not rest or rest == ":memory:":
            return None
        return Path(rest)

    @asynccontextmanager
    async def read(self) -> AsyncGenerator[AsyncConnection, None]:
        """A read transaction: one consistent snapshot for every statement in it."""
        self._check_open()
        with self._reaching(), self._in_use(), translating():
            async with self.engine.connect() as conn:
                if self.is_sqlite:
                    await conn.exec_driver_sql("BEGIN")
                elif self.is_postgres:
                    await conn.exec_driver_sql(PG_SNAPSHOT)
                try:
                    yield conn
                finally:
                    await conn.rollback()

    @asynccontextmanager
    async def write(self, chats: Collection[str] = ()) -> AsyncGenerator[AsyncConnection, None]:
        """The single writer: commits on success, rolls back on any exception.

        `chats`: the transaction writes rows of these chats only (the archive's
        inserts), so on PostgreSQL it waits only for writers of the same chats and for
        the deployment's other writers (see the module docstring). SQLite has one
        writer whatever the chats."""
        async with self._write_lock:
            self._check_open()  # also when it closed while this write waited its turn
            begun = False
            try:
                with self._reaching(), self._in_use(), translating():
                    async with self.engine.connect() as conn:
                        if self.is_sqlite:
                            await self._begin_immediate(conn)
                        elif self.is_postgres:
                            await self._take_write_turn(conn, chats)
                        begun = True
                        try:
                            yield conn
                            await conn.commit()
                        except BaseException:
                            await conn.rollback()
                            raise
            except StorageFull as full:
                raise self._filled(full) from None
            except StorageBusy as busy:
                if not begun:
                    raise  # `_begin_immediate` said so already
                raise StorageBusy(
                    f"{busy.args[0]}: another connection held the database past "
                    f"{self.busy_timeout_s:g} s (YUJI_DB_BUSY_TIMEOUT_S) in the middle of "
                    "this write; nothing of it was kept, try again"
                ) from busy
        if self.full and self._has_room():
            self.full = False
            if self.on_writable is not None:
                self.on_writable()

    @contextlib.contextmanager
    def _reaching(self) -> Generator[None]:
        """Tell `on_down` / `on_up` when the server stops and starts answering."""
        try:
            yield
        except StorageUnavailable as exc:
            self._went_down(str(exc))
            raise
        except OSError as exc:  # asyncpg's socket errors, unwrapped by SQLAlchemy
            if not self.is_postgres:
                raise
            error = StorageUnavailable(f"{type(exc).__name__}: {exc}")
            self._went_down(str(error))
            raise error from exc
        self.note_up()

    def note_up(self) -> None:
        """The server answered (here, or on another connection of this process)."""
        if self.down:
            self.down = False
            if self.on_up is not None:
                self.on_up()

    async def ping(self) -> None:
        """One round trip: raises `StorageUnavailable` (and tells `on_down`) when the
        server is away, tells `on_up` when it is back."""
        async with self.read() as conn:
            await conn.exec_driver_sql("SELECT 1")

    def _went_down(self, detail: str) -> None:
        if not self.down:
            self.down = True
            if self.on_down is not None:
                self.on_down(detail)

    def _has_room(self) -> bool:
        """Room on the SQLite file's disk for more than the next small write: SQLite
        reuses its WAL's pages, so a write may pass on a disk that is still full, and
        "writable again" should not be said (and alerted) until there is room."""
        path = self.sqlite_path
        if path is None:
            return True
        try:
            return shutil.disk_usage(path.parent).free >= ROOM_BYTES
        except OSError:
            return True

    def mark_full(self, detail: str) -> None:
        """Another writer to the store's disk found it full (a backup's ENOSPC): the
        same state and alert as a write refused for want of room, cleared the same way."""
        self._filled(StorageFull(detail))

    def _filled(self, error: StorageFull) -> StorageFull:
        detail = f"{error.args[0]}; nothing of this write was kept"
        if not self.full:
            self.full = True
            if self.on_full is not None:
                self.on_full(detail)
        return StorageFull(detail)

    async def _begin_immediate(self, conn: AsyncConnection) -> None:
        marks = self._marks
        if marks is not None:
            deadline = time.monotonic() + YIELD_MAX_S
            while marks.others_waiting() and time.monotonic() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(YIELD_POLL_S)
        try:
            with marks.waiting() if marks is not None else contextlib.nullcontext():
                await conn.exec_driver_sql("BEGIN IMMEDIATE")
        except DBAPIError as exc:
            if error_class(exc) is not StorageBusy:
                raise  # `translating` words any other failure
            raise StorageBusy(
                f"another writer held the database for {self.busy_timeout_s:g} s "
                "(YUJI_DB_BUSY_TIMEOUT_S); nothing was written, try again"
            ) from None

    async def _take_write_turn(self, conn: AsyncConnection, chats: Collection[str]) -> None:
        try:
            # One round trip; the timeout then bounds every lock of this transaction.
            await conn.exec_driver_sql(
                f"{PG_WRITE_TURN}set_config('lock_timeout', "
                f"'{round(self.busy_timeout_s * 1000)}ms', true), {turn_locks(chats)}"
            )
        except DBAPIError as exc:
            if error_class(exc) is not StorageBusy:
                raise
            raise StorageBusy(
                f"another process held the database's write turn for {self.busy_timeout_s:g} s "
                "(YUJI_DB_BUSY_TIMEOUT_S); nothing was written, try again"
            ) from None

    async def refresh_statistics(self) -> None:
        """Tell the planner what a bulk load (a copy, a restore, an evaluation's
        dataset) just wrote. PostgreSQL plans from statistics that autovacuum gathers
        only a while later: until then a freshly filled store is planned as an empty one
        (a 10k-memory chat's word stage took 10 ms instead of 1.5)."""
        async with self.write() as conn:
            if self.is_postgres:
                await conn.exec_driver_sql("ANALYZE")
            elif self.is_sqlite:
                await conn.exec_driver_sql("PRAGMA optimize")

    async def dispose(self) -> None:
        """Close every pooled connection; later reads and writes raise StorageClosed
        (after `dispose` the engine would open a fresh pool that nobody closes).

        A read or write under way (a background job finishing during shutdown) ends
        first, for up to `DRAIN_S`: the pool closes only the connections checked in,
        and one handed back after it was disposed is left to the garbage collector,
        unclosed."""
        self._closed = True
        if self._active:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), DRAIN_S)
        await self.engine.dispose()

    @contextlib.contextmanager
    def _in_use(self) -> Generator[None]:
        self._active += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._active -= 1
            if not self._active:
                self._idle.set()

    def _check_open(self) -> None:
        if self._closed:
            raise StorageClosed(
                "the database is closed (shutting down); nothing was read or written"
            )


def turn_locks(chats: Collection[str]) -> str:
    """The advisory locks a write transaction takes, in the order it takes them (a
    select list runs left to right): the deployment's turn, exclusive or, for a write
    of some chats only, shared and then each chat's by its key, keys ascending."""
    if not chats:
        return f"pg_advisory_xact_lock({WRITE_LOCK})"
    keys = sorted({chat_key(c) for c in chats})
    return ", ".join(
        [
            f"pg_advisory_xact_lock_shared({WRITE_LOCK})",
            *(f"pg_advisory_xact_lock({CHAT_LOCKS}, {k})" for k in keys),
        ]
    )


def chat_key(scope: str) -> int:
    """A chat's lock key, a signed 32-bit integer. Two chats sharing one only take
    turns with each other."""
    digest = hashlib.sha1(scope.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big", signed=True)


def _engine_options(url: str, busy_timeout_s: float) -> dict[str, Any]:
    if url.startswith("sqlite"):
        return {"connect_args": {"timeout": busy_timeout_s}}
    if url.startswith("postgresql"):
        # A server restart or a dropped socket must cost one failed statement, not a
        # pool of dead connections handed out one after another.
        return {"pool_pre_ping": True}
    return {}


def _sqlite_on_connect(dbapi_connection: Any, busy_ms: int) -> None:
    # Take transaction control away from the driver: `read`/`write` issue BEGIN
    # themselves, which is the only way to get BEGIN IMMEDIATE.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    for pragma in (
        "PRAGMA journal_mode=WAL",
        "PRAGMA synchronous=NORMAL",
        "PRAGMA foreign_keys=ON",
        f"PRAGMA busy_timeout={busy_ms}",
    ):
        cursor.execute(pragma)
    cursor.close()


class _Marks:
    """The folder where each process waiting to write leaves a file named by its pid."""

    def __init__(self, database: Path) -> None:
        self.folder = database.with_name(database.name + ".writers")
        self.mine = str(os.getpid())

    def others_waiting(self) -> bool:
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return False
        live = False
        for name in names:
            if name == self.mine or not name.isdigit():
                continue
            if pid_alive(int(name)):
                live = True
            else:  # a process killed while waiting
                with contextlib.suppress(OSError):
                    os.unlink(self.folder / name)
        return live

    @contextlib.contextmanager
    def waiting(self) -> Generator[None]:
        mark = self.folder / self.mine
        try:
            self.folder.mkdir(exist_ok=True)
            mark.touch()
        except OSError:  # a read-only folder: take turns the old way (busy timeout only)
            yield
            return
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                mark.unlink()


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs on this host (as any user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
