"""A fake wall clock for the bot subprocess: Debian's libfaketime (`apt-get install -y
faketime`), preloaded into `python bot.py`, reading the time from a file the test
rewrites (`FakeClock.set`).

- `FAKETIME_TIMESTAMP_FILE` + `FAKETIME_NO_CACHE=1`: the file is read again on every
  clock call, so a rewrite moves the bot's clock at once. Its line is a "start at"
  time, `@YYYY-MM-DD hh:mm:ss`: the clock runs on from there (a frozen absolute time
  would stop interval jobs, whose next run never comes). The line is in UTC, and the
  bot runs with `TZ=UTC` so libfaketime reads it so.
- `FAKETIME_DONT_FAKE_MONOTONIC=1`: asyncio's timers and every timeout run on the real
  monotonic clock; only the wall clock (`time.time`, `datetime.now`) jumps.
- `FAKETIME_FORCE_MONOTONIC_FIX=0`: the "monotonic fix" libfaketime turns on by itself
  on glibc makes `pthread_cond_timedwait` on the monotonic clock time out at once;
  Python's GIL waits so, and the bot's two busy threads (the loop and the SQLite
  worker) then fight for it: its start took 20 s instead of 1.
- The pthread-safe `libfaketimeMT.so.1`: the bot calls the clock from threads too
  (database and embedder workers).

libfaketime 0.9.10 (Debian 12) gets `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`
wrong when the monotonic clock is not faked (wolfcw/libfaketime#426): Python 3.11's
`time.sleep` fails with EINVAL in such a process. The bot's asyncio code never calls
it; a blocking sleep (memory_core/providers/http.py's retry back-off) would fail.

It leaves `/dev/shm/faketime_shm_<pid>` and `sem.faketime_sem_<pid>` behind even on a
clean exit; `FakeClock.cleanup(pid)` removes the bot's.

Without the library the test fails under `CI=true` (.ci/run installs it) and skips,
saying so, elsewhere (like tests/backends.py's servers).
"""

from __future__ import annotations

import contextlib
import glob
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.backends import in_ci

LIBRARY_GLOB = "/usr/lib/*/faketime/libfaketimeMT.so.1"
"""Debian's multiarch folder: x86_64-linux-gnu, aarch64-linux-gnu, …"""


def library() -> Path:
    """libfaketime's path; fails (CI) or skips (elsewhere) when it is not installed."""
    found = sorted(glob.glob(LIBRARY_GLOB))
    if not found:
        message = (
            f"the fake-clock test needs libfaketime ({LIBRARY_GLOB}): apt-get install -y faketime"
        )
        if in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return Path(found[0])


class FakeClock:
    """The bot's wall clock: `set(instant)` moves it; `now()` is where it is now (it runs
    on in real seconds from the last `set`)."""

    def __init__(self, folder: Path, start: datetime) -> None:
        self.library = library()
        self.path = folder / "faketime.rc"
        folder.mkdir(parents=True, exist_ok=True)
        self._at, self._set_at = start, time.monotonic()
        self.set(start)

    def env(self) -> dict[str, str]:
        return {
            "LD_PRELOAD": str(self.library),
            "FAKETIME_TIMESTAMP_FILE": str(self.path),
            "FAKETIME_NO_CACHE": "1",
            "FAKETIME_DONT_FAKE_MONOTONIC": "1",
            "FAKETIME_FORCE_MONOTONIC_FIX": "0",
            "TZ": "UTC",
        }

    def set(self, instant: datetime) -> None:
        utc = instant.astimezone(UTC)
        staged = self.path.with_suffix(".new")
        staged.write_text(f"@{utc:%Y-%m-%d %H:%M:%S}\n", encoding="ascii")
        staged.replace(self.path)  # never a half-written line
        self._at, self._set_at = utc.replace(microsecond=0), time.monotonic()

    def now(self) -> datetime:
        return self._at + timedelta(seconds=time.monotonic() - self._set_at)

    @staticmethod
    def cleanup(pid: int | None) -> None:
        """Remove the shared memory libfaketime left for process `pid`."""
        if pid is None:
            return
        for name in (f"faketime_shm_{pid}", f"sem.faketime_sem_{pid}"):
            with contextlib.suppress(OSError):
                Path("/dev/shm", name).unlink()
