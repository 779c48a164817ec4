"""The alert seam: how the core says "this is broken and not healing".

`fire(key, text)` reports a failing thing, `recover(key, text)` says it works again.
Implementations must never raise and never block the caller for long: the Telegram
sink (ops issue) sends from a background task; the log sink below is the default.
"""

from __future__ import annotations

import logging
from typing import Protocol

log = logging.getLogger("yuji.alerts")


class AlertSink(Protocol):
    def fire(self, key: str, text: str) -> None: ...

    def recover(self, key: str, text: str) -> None: ...


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
