"""How the last night reads in `/status` and on the command line: pure formatting."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from .types import LastRun, StepReport

STEP_LABELS = {
    "settle": "结算",
    "diary": "小传",
    "cards": "卡片",
    "states": "状态",
    "events": "事件",
    "gc": "回收",
}
STATE_MARKS = {"done": "✓", "failed": "✗", "running": "…", "pending": "·"}


def status_lines(last: LastRun, tz: ZoneInfo) -> dict[str, str]:
    """Labelled lines for `/status` (the chat helper's extras), in Chinese."""
    if last.day is None:
        return {"夜间整理": "还没有跑过"}
    steps = " ".join(
        f"{STATE_MARKS.get(s.state, '?')}{STEP_LABELS.get(s.step, s.step)}" for s in last.steps
    )
    lines = {"夜间整理": f"{last.day} {steps}"}
    if last.circuit_open:
        lines["夜间整理熔断"] = f"连续失败 {last.consecutive_failures} 次，已停止自动重试"
    elif last.retry_at is not None:
        lines["夜间整理重试"] = (
            f"第 {last.consecutive_failures} 次失败，{last.retry_at.astimezone(tz):%m-%d %H:%M} 重试"
        )
    if last.last_error and (last.circuit_open or last.retry_at is not None):
        lines["夜间整理错误"] = last.last_error[:120]
    return lines


def report_lines(reports: Sequence[StepReport]) -> list[str]:
    """One line per step for `yuji nightly`."""
    lines: list[str] = []
    for r in reports:
        asks = f" [{r.attempts} ask{'s' if r.attempts != 1 else ''}]" if r.attempts else ""
        detail = f": {r.detail}" if r.detail else ""
        lines.append(f"{r.scope} {r.day or '-'} {r.step:<6} {r.outcome}{asks}{detail}")
    return lines


def format_when(instant: datetime | None, tz: ZoneInfo) -> str:
    return "-" if instant is None else f"{instant.astimezone(tz):%Y-%m-%d %H:%M}"
