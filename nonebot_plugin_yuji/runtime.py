"""The one opened core of this bot process, set at startup and closed at shutdown."""

from __future__ import annotations

from memory_core import Yuji

_core: Yuji | None = None


def set_core(core: Yuji | None) -> None:
    global _core
    _core = core


def core() -> Yuji:
    if _core is None:
        raise RuntimeError("yuji is not started yet")
    return _core


def started() -> Yuji | None:
    """The core, or None before startup and after shutdown: for what runs on a timer
    or a NoneBot hook and has nothing to do without one."""
    return _core


def leading() -> Yuji | None:
    """The core while this process leads the deployment, else None: for the jobs that
    run once across every process on the store (docs/design.md#several-processes)."""
    core = _core
    return core if core is not None and core.deployment.leader.is_leader else None
