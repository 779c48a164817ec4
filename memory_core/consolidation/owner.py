"""Which process owns an open batch, and whether it still runs.

A batch records its owner as `host/boot/pid/start`: the host name, the kernel's boot
id, the process id and the process's start time in clock ticks since boot (Linux
`/proc/<pid>/stat`, field 22). A pid alone is not enough: after a kill the number is
soon given to another process, but never with the same start time in the same boot.

`owner_alive` answers True (it runs), False (it is gone: its batch can be failed
now instead of waiting for the watchdog) or None (cannot tell: another host, or no
`/proc`, where only the pid is checked).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

from memory_core.storage.engine import pid_alive

PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class Owner:
    host: str
    boot: str
    pid: int
    start: str
    """Clock ticks since boot; empty where /proc is missing."""

    def __str__(self) -> str:
        return f"{self.host}/{self.boot}/{self.pid}/{self.start}"

    @staticmethod
    def parse(text: str) -> Owner | None:
        parts = text.rsplit("/", 3)
        if len(parts) != 4 or not parts[2].isdigit():
            return None
        return Owner(parts[0], parts[1], int(parts[2]), parts[3])

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}"


def owner_of(pid: int, proc: Path = PROC) -> Owner:
    return Owner(socket.gethostname(), _boot_id(proc), pid, start_ticks(pid, proc) or "")


def this_process() -> str:
    return str(owner_of(os.getpid()))


def owner_alive(text: str, proc: Path = PROC) -> bool | None:
    owner = Owner.parse(text)
    if owner is None or owner.host != socket.gethostname():
        return None
    if owner.boot and owner.boot != _boot_id(proc):
        return False  # the machine rebooted since: every process of then is gone
    if owner.start and proc.is_dir():
        return start_ticks(owner.pid, proc) == owner.start
    return pid_alive(owner.pid)


def start_ticks(pid: int, proc: Path = PROC) -> str | None:
    """Field 22 of /proc/<pid>/stat (after the parenthesised name, which may hold
    spaces); None when no such process runs (or it is a zombie: killed, not reaped)."""
    try:
        stat = (proc / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return fields[19]


def _boot_id(proc: Path) -> str:
    try:
        return (proc / "sys/kernel/random/boot_id").read_text(encoding="utf-8").strip()
    except OSError:
        return ""
