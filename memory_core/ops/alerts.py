"""The alert seam: how the core says "this is broken and not healing".

`fire(key, text)` reports a failing thing, `recover(key, text)` says it works again.
Implementations must never raise and never block the caller for long: the Telegram
sink (`telegram.py`) sends from a background task; the log sink below is the default.

`core.alerts` is an `AlertGate` in front of the sink: the same key reaches the sink
at most once per `alert_dedup_s`, and `recover` reaches it only for a key whose
failure the sink was told about, so callers may call `recover` after every success.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from memory_core.clock import Clock

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


@dataclass(frozen=True, slots=True)
class AlertRecord:
    """One alert or recovery this process saw (the console's last seven days)."""

    at: datetime
    key: str
    text: str
    recovered: bool


HISTORY_KEPT = 500


class AlertGate:
    """Deduplication and recovery tracking in front of a sink; what `core.alerts` is.

    - `fire`: forwarded unless the same key was forwarded less than `window_s` ago
      (the next forwarded message says how many were held back).
    - `recover`: forwarded only when the sink saw the failure; otherwise a no-op.
    - Never raises: a sink that throws is logged and ignored.
    """

    def __init__(self, sink: AlertSink, clock: Clock, window_s: float) -> None:
        self.sink = sink
        self._clock = clock
        self._window = timedelta(seconds=window_s)
        self._keys: dict[str, _KeyState] = {}
        self._history: deque[AlertRecord] = deque(maxlen=HISTORY_KEPT)

    def fire(self, key: str, text: str) -> None:
        state = self._keys.setdefault(key, _KeyState())
        state.failing = True
        now = self._clock.now()
        self._history.append(AlertRecord(now, key, text, recovered=False))
        if state.last_sent is not None and now - state.last_sent < self._window:
            state.suppressed += 1
            log.debug("alert [%s] held back (sent less than %s ago): %s", key, self._window, text)
            return
        if state.suppressed:
            text = f"{text}\n（上次提醒后又发生 {state.suppressed} 次）"
        state.last_sent, state.notified, state.suppressed = now, True, 0
        self._call(self.sink.fire, key, text)

    def recover(self, key: str, text: str) -> None:
        state = self._keys.get(key)
        if state is None or not state.failing:
            return
        state.failing = False
        self._history.append(AlertRecord(self._clock.now(), key, text, recovered=True))
        if state.notified:
            state.notified = False
            self._call(self.sink.recover, key, text)

    def history(self, since: datetime) -> list[AlertRecord]:
        """Alerts and recoveries since `since` (this process only), newest first."""
        return [r for r in reversed(self._history) if r.at >= since]

    def is_failing(self, key: str) -> bool:
        state = self._keys.get(key)
        return state is not None and state.failing

    @property
    def failing(self) -> tuple[str, ...]:
        """Keys currently failing (fired and not recovered since), sorted."""
        return tuple(sorted(k for k, s in self._keys.items() if s.failing))

    async def aclose(self, timeout_s: float = 5.0) -> None:
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
