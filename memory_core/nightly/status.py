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
    "people": "人物",
    "states": "状态",
    "events": "事件",
    "followups": "跟进",
    "gc": "回收",
}
STATE_MARKS = {"done": "✓", "failed": "✗", "running": "…", "pending": "·"}
STATE_WORDS = {"done": "完成", "failed": "失败", "running": "进行中", "pending": "等待中"}
"""A step's checkpoint state as `yuji nightly --status` says it (the console's words)."""
OUTCOME_WORDS = {
    "done": "完成",
    "skipped": "跳过",
    "kept": "早已完成",
    "failed": "失败",
    "waiting": "等模型",
    "blocked": "受阻",
}
"""A step's outcome as `yuji nightly` says it (the console's words)."""


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
    """One line per step for `yuji nightly`, in Chinese; the step's detail in its own
    words."""
    lines: list[str] = []
    for r in reports:
        asks = f"（问了模型 {r.attempts} 次）" if r.attempts else ""
        detail = f"：{r.detail}" if r.detail else ""
        step = STEP_LABELS.get(r.step, r.step)
        outcome = OUTCOME_WORDS.get(r.outcome, r.outcome)
        lines.append(f"{r.scope} {r.day or '-'} {step} {outcome}{asks}{detail}")
    return lines


def format_when(instant: datetime | None, tz: ZoneInfo) -> str:
    return "-" if instant is None else f"{instant.astimezone(tz):%Y-%m-%d %H:%M}"
