"""The same complaint from the same place, logged once per interval with a count.

Under a flood (a client sending thousands of bad frames, a full queue) a line per
event buries everything else and grows the log without bound. `LogThrottle` lets the
first occurrence of a key through, counts the repeats, and lets the next one through
only after `interval_s`, saying how many were held back:

    throttle = LogThrottle(60.0)
    if (held := throttle.allow(("frame", "JSONDecodeError"))) is not None:
        log.warning("non-JSON frame skipped%s", repeats(held))

The clock is monotonic seconds, injected for tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass

HELD_BACK = "yuji_held_back"
"""Key a log record's `extra` carries when a flood filter held it back (every sink
drops such a record); the plugin's log patcher sets it, see `nonebot_plugin_yuji/ops_logs.py`."""
SELF_THROTTLED = "yuji_throttled"
"""Key in `extra` of a record already throttled where it was logged (left alone)."""

MAX_KEYS = 1024
"""Distinct keys remembered; the oldest are forgotten beyond that (memory stays flat)."""


@dataclass(slots=True)
class _Seen:
    last: float
    held: int


class LogThrottle:
    def __init__(self, interval_s: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = interval_s
        self._clock = clock
        self._seen: dict[Hashable, _Seen] = {}

    def allow(self, key: Hashable) -> int | None:
        """None = hold this one back (counted); else log it, with this many held since."""
        now = self._clock()
        seen = self._seen.get(key)
        if seen is None:
            if len(self._seen) >= MAX_KEYS:
                self._seen.pop(next(iter(self._seen)))
            self._seen[key] = _Seen(now, 0)
            return 0
        if now - seen.last < self.interval_s:
            seen.held += 1
            return None
        held, seen.last, seen.held = seen.held, now, 0
        return held

    def pending(self) -> dict[Hashable, int]:
        """Keys with repeats held back and not reported yet."""
        return {key: seen.held for key, seen in self._seen.items() if seen.held}


def repeats(held: int) -> str:
    """The suffix of a throttled line: empty for the first one."""
    return f" (and {held} more like it since the last report)" if held else ""
