"""Step 5: cold memories move to status `cold` by the rules of `gc` (nothing deleted)."""

from __future__ import annotations

from datetime import timedelta

from memory_core.errors import NotFound, ValidationError

from . import gc
from .context import CHANGED_BY, DayRun, StepResult

GC_SCAN_LIMIT = 5000
GC_MAX_PER_RUN = 1000


def gc_rules(run: DayRun) -> gc.GcRules:
    s = run.services.settings
    return gc.GcRules(
        cold_after_days=s.gc_cold_after_days,
        exempt_types=s.gc_exempt_types,
        keep_importance=s.gc_keep_importance,
    )


async def collect(run: DayRun) -> StepResult:
    """Cold memories -> status `cold` (history kept, nothing deleted)."""
    services = run.services
    rules = gc_rules(run)
    if rules.cold_after_days <= 0:
        return StepResult("gc disabled", skipped=True)
    horizon = run.now - timedelta(days=rules.cold_after_days)
    rows = await services.memory_repo.gc_rows(run.scope, horizon, GC_SCAN_LIMIT)
    chosen = gc.select_cold(rows, run.now, rules, GC_MAX_PER_RUN)
    if not chosen:
        return StepResult("nothing cold", {"cold": []}, skipped=True)
    moved: list[int] = []
    for memory_id in chosen:
        try:
            await services.memories.set_status(
                run.scope,
                memory_id,
                "cold",
                reason=f"nightly gc: idle over {rules.cold_after_days} days, never credited",
                changed_by=CHANGED_BY,
            )
        except (ValidationError, NotFound):
            continue
        moved.append(memory_id)
    return StepResult(f"{len(moved)} memories cold", {"cold": moved})
