"""Scheduled jobs: consolidation ticks, its watchdog, and start-up reconciliation.

- tick (every YUJI_CONSOLIDATION_TICK_S, one instance, coalesced): reconcile once per
  process, then at most one batch (`core.consolidation.run_once()`); skipped without a model;
- watchdog (every minute): fail batches without progress (`core.consolidation.watchdog()`);
- reconcile: also scheduled to run once right after start-up.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from nonebot import logger, require

require("nonebot_plugin_apscheduler")

from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from memory_core import Settings, Yuji  # noqa: E402

from . import runtime  # noqa: E402

TICK_JOB_ID = "yuji_consolidation_tick"
WATCHDOG_JOB_ID = "yuji_consolidation_watchdog"
RECONCILE_JOB_ID = "yuji_consolidation_reconcile"
WATCHDOG_INTERVAL_S = 60

_reconciled: set[int] = set()
_lock = asyncio.Lock()


async def ensure_reconciled(core: Yuji) -> None:
    """Reconcile once per opened core, before its first batch."""
    async with _lock:
        if id(core) in _reconciled:
            return
        report = await core.consolidation.reconcile()
        _reconciled.add(id(core))
        if report.failed or report.fixes:
            logger.warning(
                f"yuji consolidation: start-up reconcile failed {len(report.failed)} open "
                f"batch(es), moved {len(report.fixes)} watermark(s) back"
            )


async def tick() -> None:
    core = runtime.started()
    if core is None:
        return
    await run_tick(core)


async def run_tick(core: Yuji) -> str:
    """One scheduler tick; returns what happened (for logs and tests)."""
    await ensure_reconciled(core)
    if core.models.consolidation is None:
        return "skipped: no model configured"
    try:
        report = await core.consolidation.run_once()
    except Exception as exc:  # a tick must never take the scheduler down
        logger.exception("yuji consolidation tick failed")
        return f"error: {exc}"
    if report is None:
        return f"skipped: {core.consolidation.last_skip}"
    text = report.describe()
    if report.state == "done":
        logger.info(f"yuji consolidation: {text}")
    else:
        logger.warning(f"yuji consolidation: {text}")
    return text


async def watchdog() -> None:
    core = runtime.started()
    if core is None:
        return
    await core.consolidation.watchdog()


async def reconcile() -> None:
    core = runtime.started()
    if core is None:
        return
    await ensure_reconciled(core)


def schedule(settings: Settings) -> None:
    scheduler.add_job(
        tick,
        "interval",
        seconds=settings.consolidation_tick_s,
        id=TICK_JOB_ID,
        replace_existing=True,
        max_instances=1,
        coalesce=True,
    )
    scheduler.add_job(
        watchdog,
        "interval",
        seconds=min(WATCHDOG_INTERVAL_S, max(1, settings.batch_watchdog_s)),
        id=WATCHDOG_JOB_ID,
        replace_existing=True,
        max_instances=1,
        coalesce=True,
    )
    scheduler.add_job(
        reconcile,
        "date",
        run_date=datetime.now(UTC) + timedelta(seconds=1),
        id=RECONCILE_JOB_ID,
        replace_existing=True,
    )
