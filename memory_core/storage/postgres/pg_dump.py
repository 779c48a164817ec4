"""PostgreSQL's own backup tools: finding `pg_dump` and `pg_restore`, checking they
can read the server, and running them.

The tools come from `YUJI_PG_DUMP` (the path of `pg_dump`; `pg_restore` beside it)
or from PATH. `pg_dump` refuses a server of a newer major version than its own, so
the check compares major versions before anything is written, and says in one line
which tool is too old. Connection parameters come from the SQLAlchemy URL; the
password goes in `PGPASSWORD`, never on a command line another user can read.
Blocking (subprocesses): run in a thread.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url

from memory_core.errors import ConfigError, StorageError

_VERSION = re.compile(r"\(PostgreSQL\)\s+(\d+)(?:\.(\d+))?")


@dataclass(frozen=True, slots=True)
class Tools:
    pg_dump: Path
    pg_restore: Path
    version_num: int
    """As `server_version_num` spells it: 150018 for 15.18."""

    @property
    def major(self) -> int:
        return self.version_num // 10000


def find_tools(configured: str, server_version_num: int, server_version: str) -> Tools:
    """The tools to use against a server of `server_version_num`; a `ConfigError` line
    when they are missing or older than the server."""
    if configured:
        pg_dump = Path(configured)
        if not pg_dump.is_file():
            raise ConfigError(f"YUJI_PG_DUMP={configured}: no such file")
    else:
        found = shutil.which("pg_dump")
        if found is None:
            raise ConfigError(
                f"pg_dump not found: install PostgreSQL {server_version_num // 10000}'s "
                "client tools or set YUJI_PG_DUMP to its pg_dump"
            )
        pg_dump = Path(found)
    pg_restore = pg_dump.with_name("pg_restore")
    if not pg_restore.is_file():
        raise ConfigError(f"no pg_restore beside {pg_dump}")
    tools = Tools(pg_dump, pg_restore, tool_version(pg_dump))
    if tools.major < server_version_num // 10000:
        raise ConfigError(
            f"{pg_dump} is PostgreSQL {tools.major}, older than the server "
            f"(PostgreSQL {server_version}): set YUJI_PG_DUMP to a pg_dump of "
            f"{server_version_num // 10000} or newer"
        )
    return tools


def tool_version(path: Path) -> int:
    try:
        done = subprocess.run(
            [str(path), "--version"], capture_output=True, text=True, check=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise ConfigError(f"cannot run {path} --version: {exc}") from None
    match = _VERSION.search(done.stdout)
    if match is None:
        raise ConfigError(
            f"{path} --version said {done.stdout.strip()!r}, not a PostgreSQL version"
        )
    return int(match.group(1)) * 10000 + int(match.group(2) or 0)


def connection(url: str) -> tuple[list[str], dict[str, str]]:
    """The command-line options and environment that reach `url`'s database."""
    parsed = make_url(url)
    host = parsed.host or parsed.query.get("host")
    args: list[str] = ["--no-password"]
    if host:
        args += ["--host", str(host)]
    if parsed.port:
        args += ["--port", str(parsed.port)]
    if parsed.username:
        args += ["--username", parsed.username]
    env = dict(os.environ)
    if parsed.password:
        env["PGPASSWORD"] = str(parsed.password)
    ssl = parsed.query.get("sslmode") or parsed.query.get("ssl")
    if ssl:
        env["PGSSLMODE"] = str(ssl)
    return args, env


def dump(tools: Tools, url: str, target: Path, *, snapshot: str | None) -> None:
    """`pg_dump --format=custom` of `url`'s database into the new file `target`."""
    args, env = connection(url)
    command = [str(tools.pg_dump), "--format=custom", f"--file={target}", *args]
    if snapshot is not None:
        command.append(f"--snapshot={snapshot}")
    command.append(f"--dbname={make_url(url).database}")
    _run(command, env, "pg_dump")


def restore(tools: Tools, source: Path, url: str) -> None:
    """Every object and row of the dump `source` into `url`'s (empty) database, in one
    transaction: a failure leaves the database as it was. Objects are owned by the
    restoring role, as a fresh database of that role would be."""
    args, env = connection(url)
    command = [
        str(tools.pg_restore),
        "--exit-on-error",
        "--single-transaction",
        "--no-owner",
        "--no-privileges",
        *args,
        f"--dbname={make_url(url).database}",
        str(source),
    ]
    _run(command, env, "pg_restore")


def list_entries(tools: Tools, source: Path) -> int:
    """How many entries the dump's table of contents holds (it reads, or raises)."""
    done = _run(
        [str(tools.pg_restore), "--list", str(source)], dict(os.environ), "pg_restore --list"
    )
    return sum(1 for line in done.splitlines() if line and not line.startswith(";"))


def _run(command: list[str], env: dict[str, str], name: str) -> str:
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise StorageError(f"{name} could not run: {exc}") from None
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if line.strip()]
        # The first error says why; what follows repeats it or counts the errors.
        first = next((line for line in said if "error" in line.lower()), said[-1] if said else "")
        raise StorageError(f"{name} failed: {first or f'exit {done.returncode}'}")
    return done.stdout
