"""The database server away and back, as one alert key that fires and recovers.

`Database.on_down` / `on_up` call `down` / `up` (service.py wires them). Several bot
processes share one PostgreSQL server and all of them lose it at once: only the one
that led last (`speaks`: `Leadership.led_last`) sends the alert and its recovery, so
an outage is one message each way for the whole deployment; every process logs it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .alerts import AlertSink

log = logging.getLogger("yuji.ops")

STORAGE_DOWN_KEY = "storage-unreachable"


def down_text(detail: str) -> str:
    return (
        f"数据库连不上了：{detail}。新消息先排在队列里，连上后按顺序补写，"
        "不会丢；回复暂时不带记忆，整理和备份等它恢复。"
    )


def up_text(seconds: float) -> str:
    return f"数据库恢复了（断了约 {seconds:.0f} 秒）：排队的消息正在补写，一切照常。"


@dataclass
class OutageAlerts:
    alerts: AlertSink
    speaks: Callable[[], bool] = lambda: True
    clock: Callable[[], float] = time.monotonic
    _since: float | None = field(default=None, init=False)

    def down(self, detail: str) -> None:
        self._since = self.clock()
        log.warning("the database cannot be reached: %s", detail)
        if self.speaks():
            self.alerts.fire(STORAGE_DOWN_KEY, down_text(detail))

    def up(self) -> None:
        since, self._since = self._since, None
        seconds = 0.0 if since is None else self.clock() - since
        log.warning("the database answers again after %.1f s", seconds)
        # The gate forwards a recovery only where the failure was sent.
        self.alerts.recover(STORAGE_DOWN_KEY, up_text(seconds))
