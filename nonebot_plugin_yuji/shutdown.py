"""A graceful stop on SIGINT/SIGTERM: read what the clients sent, write it, then close.

uvicorn's own handler (installed before our start-up runs) closes every socket at
once, dropping frames a client sent but the bot had not read yet. `install` wraps
it: the first signal first has `IngestAdapter.quiesce` refuse new connections and
read the open sockets empty (within half of `YUJI_SHUTDOWN_DRAIN_S`), then passes the
signal on to uvicorn, whose shutdown runs the plugin's drain of the archive queue
(`__init__._stop`) with what is `remaining` of the budget. A second signal goes straight through (a forced stop).
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

from nonebot import get_adapters, logger

from .onebot_adapter import IngestAdapter

SIGNALS = (signal.SIGINT, signal.SIGTERM)

_tasks: set[asyncio.Task[None]] = set()
_signalled_at: float | None = None


def remaining(drain_s: float) -> float:
    """What is left of the drain budget since the signal (all of it without one)."""
    if _signalled_at is None:
        return drain_s
    return max(0.0, drain_s - (time.monotonic() - _signalled_at))


def install(drain_s: float) -> None:
    """Wrap the server's SIGINT/SIGTERM handlers (call from the running loop)."""
    adapter = get_adapters().get(IngestAdapter.get_name())
    if not isinstance(adapter, IngestAdapter) or threading.current_thread() is not (
        threading.main_thread()
    ):
        return  # the stock adapter (nothing to read empty first), or no signals here
    loop = asyncio.get_running_loop()
    state: dict[str, bool] = {"stopping": False}
    for sig in SIGNALS:
        previous: Any = signal.getsignal(sig)
        if not callable(previous):
            continue
        signal.signal(sig, _handler(previous, adapter, loop, drain_s, state))


def _handler(
    previous: Callable[[int, FrameType | None], Any],
    adapter: IngestAdapter,
    loop: asyncio.AbstractEventLoop,
    drain_s: float,
    state: dict[str, bool],
) -> Callable[[int, FrameType | None], None]:
    def handle(signum: int, frame: FrameType | None) -> None:
        global _signalled_at
        if state["stopping"]:
            previous(signum, frame)
            return
        state["stopping"] = True
        _signalled_at = time.monotonic()

        async def quiesce_then_stop() -> None:
            try:
                read_empty = await adapter.quiesce(drain_s / 2)
                logger.info(
                    f"yuji: {signal.Signals(signum).name}: no new connections; open ones "
                    + ("read empty" if read_empty else "still sending after the wait")
                )
            finally:
                previous(signum, frame)

        task = loop.create_task(quiesce_then_stop())
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)

    return handle
