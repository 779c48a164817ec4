"""Logs under a flood: the same error from the same place, once per interval with a count."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from memory_core import LogThrottle
from memory_core.log_throttle import SELF_THROTTLED
from nonebot_plugin_yuji.ops_logs import flood_marker, not_held_back


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def record(
    message: str, *, level: int = 40, error: type | None = ValueError, line: int = 7, **extra: Any
) -> Any:
    """The fields of a loguru record the marker and the filter read."""
    return {
        "message": message,
        "level": SimpleNamespace(no=level),
        "exception": None if error is None else SimpleNamespace(type=error),
        "name": "nonebot_plugin_yuji.ingest",
        "function": "archive_frame",
        "line": line,
        "extra": dict(extra),
    }


def written(records: list[Any]) -> list[str]:
    return [r["message"] for r in records if not_held_back(r)]


def test_repeated_tracebacks_are_held_back_and_counted() -> None:
    ticks = Ticks()
    mark = flood_marker(LogThrottle(60.0, clock=ticks))
    records = [record(f"could not archive message {i}") for i in range(100)]
    records += [record("the same place, another error", error=KeyError)]
    records += [record("a warning without a traceback", level=30, error=None) for _ in range(2)]
    records += [record("throttled where logged", **{SELF_THROTTLED: True}) for _ in range(2)]
    for r in records:
        mark(r)
    ticks.now = 61.0
    late = record("could not archive message 100")
    mark(late)
    lines = written([*records, late])
    assert [line for line in lines if line.startswith("could not archive")] == [
        "could not archive message 0",
        "could not archive message 100 (and 99 more like it since the last report)",
    ]
    assert lines.count("the same place, another error") == 1
    assert lines.count("a warning without a traceback") == 2
    assert lines.count("throttled where logged") == 2
