"""yuji's memory library: archive, memories, recall, consolidation.

This module is the curated public API; plugins import only from here. It never
imports nonebot.
"""

from .clock import Clock as Clock
from .clock import FakeClock as FakeClock
from .clock import SystemClock as SystemClock
from .errors import YujiError as YujiError
from .service import Yuji as Yuji
from .settings import Settings as Settings

__all__ = ["Clock", "FakeClock", "Settings", "SystemClock", "Yuji", "YujiError"]
