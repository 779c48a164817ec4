"""The alert seam: how the core says "this is broken and not healing".

`fire(key, text)` reports a failing thing, `recover(key, text)` says it works again.
Implementations must never raise and never block the caller for long: the Telegram
sink (`telegram.py`) sends from a background task; the log sink below is the default.

`core.alerts` is an `AlertGate` in front of the sink: the same key reaches the sink
at most once per `alert_dedup_s`, and `recover` reaches it only for a key whose
failure the sink was told about, so callers may call `recover` after every success.
What reaches the sink is also written to the alert log (`AlertRepo`) from a background
task, for the console's last seven days; a write that fails is retried with the next.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from memory_core.clock import Clock
from memory_core.storage import AlertRecord, AlertRepo

log = logging.getLogger("yuji.alerts")


class AlertSink(Protocol):
    def fire(self, key: str, text: str) -> None: ...

    def recover(self, key: str, text: str) -> None: ...


@runtime_checkable
class ClosableSink(Protocol):
    async def aclose(self, timeout_s: float) -> None:
        """Deliver what is pending (for at most `timeout_s`), then release resources."""
        ...


class LogAlertSink:
    def fire(self, key: str, text: str) -> None:
        log.error("ALERT [%s] %s", key, text)

    def recover(self, key: str, text: str) -> None:
        log.warning("RECOVERED [%s] %s", key, text)


class RecordingAlertSink:
    """A fake for tests: remembers every call."""

    def __init__(self) -> None:
        self.fired: list[tuple[str, str]] = []
        self.recovered: list[tuple[str, str]] = []

    def fire(self, key: str, text: str) -> None:
        self.fired.append((key, text))

    def recover(self, key: str, text: str) -> None:
        self.recovered.append((key, text))


@dataclass(slots=True)
class _KeyState:
    failing: bool = False
    notified: bool = False
    """The sink was told about the current failure (so a recovery message is due)."""
    last_sent: datetime | None = None
    suppressed: int = 0


HISTORY_KEPT = 500
"""Alerts kept in memory (without a log, or not yet written to it)."""
LOG_KEPT_DAYS = 30
"""Alert log rows older than this are pruned."""


class AlertGate:
    """Deduplication and recovery tracking in front of a sink; what `core.alerts` is.

    - `fire`: forwarded unless the same key was forwarded less than `window_s` ago
      (the next forwarded message says how many were held back).
    - `recover`: forwarded only when the sink saw the failure; otherwise a no-op.
    - Never raises: a sink that throws is logged and ignored.
    - With a `log`, what reaches the sink is written to it (`history` reads it back).
    """

    def __init__(
        self, sink: AlertSink, clock: Clock, window_s: float, log: AlertRepo | None = None
    ) -> None:
        self.sink = sink
        self._clock = clock
        self._window = timedelta(seconds=window_s)
        self._keys: dict[str, _KeyState] = {}
        self._log = log
        self._history: deque[AlertRecord] = deque(maxlen=HISTORY_KEPT)
        """Without a log: what was sent. With one: what is not written yet."""
        self._saving: asyncio.Task[None] | None = None
        self._save_lock = asyncio.Lock()

    def fire(self, key: str, text: str) -> None:
        state = self._keys.setdefault(key, _KeyState())
        state.failing = True
        now = self._clock.now()
        if state.last_sent is not None and now - state.last_sent < self._window:
            state.suppressed += 1
            log.debug("alert [%s] held back (sent less than %s ago): %s", key, self._window, text)
            return
        if state.suppressed:
            text = f"{text}\n（上次提醒后又发生 {state.suppressed} 次）"
        state.last_sent, state.notified, state.suppressed = now, True, 0
        self._record(AlertRecord(now, key, text, recovered=False))
        self._call(self.sink.fire, key, text)

    def recover(self, key: str, text: str) -> None:
        state = self._keys.get(key)
        if state is None or not state.failing:
            return
        state.failing = False
        if state.notified:
            state.notified = False
            self._record(AlertRecord(self._clock.now(), key, text, recovered=True))
            self._call(self.sink.recover, key, text)

    async def history(self, since: datetime, limit: int = HISTORY_KEPT) -> list[AlertRecord]:
        """Alerts and recoveries sent since `since`, newest first: from the log (every
        process that wrote to it, across restarts) plus what is not written yet."""
        pending = [r for r in self._history if r.at >= since]
        if self._log is None:
            return sorted(pending, key=lambda r: r.at, reverse=True)[:limit]
        await self.save()
        try:
            written = await self._log.since(since, limit)
        except Exception:
            log.exception("the alert log could not be read")
            written = []
        pending = [r for r in self._history if r.at >= since]
        return sorted(written + pending, key=lambda r: r.at, reverse=True)[:limit]

    async def save(self) -> None:
        """Write what was sent and is not in the log yet (kept for the next try when
        the write fails: a full disk is itself an alert)."""
        if self._log is None:
            return
        async with self._save_lock:
            batch = list(self._history)
            if not batch:
                return
            prune = self._clock.now() - timedelta(days=LOG_KEPT_DAYS)
            try:
                await self._log.add(batch, prune_before=prune)
            except Exception as exc:
                log.warning("alerts not written to the alert log yet (%s): %s", len(batch), exc)
                return
            written = {id(r) for r in batch}
            while self._history and id(self._history[0]) in written:
                self._history.popleft()

    def _record(self, record: AlertRecord) -> None:
        self._history.append(record)
        if self._log is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a worker thread: the next save on the loop writes it
            return
        if self._saving is None or self._saving.done():
            self._saving = loop.create_task(self.save())

    def is_failing(self, key: str) -> bool:
        state = self._keys.get(key)
        return state is not None and state.failing

    @property
    def failing(self) -> tuple[str, ...]:
        """Keys currently failing (fired and not recovered since), sorted."""
        return tuple(sorted(k for k, s in self._keys.items() if s.failing))

    async def aclose(self, timeout_s: float = 5.0) -> None:
        if self._saving is not None and not self._saving.done():
            await asyncio.wait({self._saving}, timeout=timeout_s)
        await self.save()
        if isinstance(self.sink, ClosableSink):
            try:
                await self.sink.aclose(timeout_s)
            except Exception:
                log.exception("closing the alert sink failed")

    @staticmethod
    def _call(method: _SinkMethod, key: str, text: str) -> None:
        try:
            method(key, text)
        except Exception:
            log.exception("alert sink failed on [%s]: %s", key, text)


class _SinkMethod(Protocol):
    def __call__(self, key: str, text: str, /) -> None: ...
