"""The data folder a bot process owns: usable, and not shared with a second bot.

Two bots on one folder would write one log and both run the backups. The claim is an
`fcntl.flock` on `bot.lock` in the folder, which the kernel drops when the process
ends however it ends (SIGKILL and power loss included), so no stale lock is ever left
to clear by hand; the file holds the holder's pid for the refusal to name. It is per
folder: bots sharing one PostgreSQL store with folders of their own each hold theirs.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

from memory_core.errors import ConfigError

LOCK_FILE = "bot.lock"


def ensure_usable(path: Path) -> None:
    """Create `path` if needed and prove it writable, so a bad YUJI_DATA_DIR is one
    line at start-up rather than an OSError in the middle of opening the core."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ConfigError(f"YUJI_DATA_DIR {path} is a file, not a folder") from None
    except OSError as exc:
        raise ConfigError(f"YUJI_DATA_DIR {path}: cannot create it ({exc.strerror})") from None
    try:
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise ConfigError(
            f"YUJI_DATA_DIR {path} is not writable ({exc.strerror}): the bot writes its "
            "database, logs and backups there"
        ) from None


@contextmanager
def claimed(path: Path) -> Generator[None]:
    """Hold `path` for this process while the block runs; a `ConfigError` naming the
    running process when another one holds it."""
    fd = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"another bot (pid {_holder(fd)}) is running on {path}: stop it, or give "
                "this one its own YUJI_DATA_DIR"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def _holder(fd: int) -> str:
    # The holder writes its pid right after locking: empty only in that instant.
    return os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
