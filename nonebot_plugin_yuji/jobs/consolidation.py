"""Scheduled jobs: the consolidation scheduler, its watchdog, and start-up reconciliation.

- reconcile (when this process gains leadership: at start-up for a lone process, and
  at every later takeover): fail what a crashed process left open, then start the
  scheduler (`core.consolidation.start()`): it runs batches as soon as chats are
  eligible, within the token budget, up to YUJI_CONSOLIDATION_CONCURRENCY at a time,
  and wakes on every archived message; skipped without a model. Not also a one-off
  job after start-up: that ran it a second time a second later, and logged its line
  twice;
- tick (every YUJI_CONSOLIDATION_TICK_S, one instance, coalesced): a safety poll that
  restarts the scheduler if it died and wakes it;
- watchdog (every minute): fail batches without progress (`core.consolidation.watchdog()`).

All of them run in the deployment's leader only (`runtime.leading()`); losing
leadership stops the scheduler.
"""

from __future__ import annotations

import asyncio

from nonebot import logger, require

require("nonebot_plugin_apscheduler")

from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from memory_core import Settings, Yuji  # noqa: E402

from .. import runtime  # noqa: E402, TID252 (plugin modules load under two names)

TICK_JOB_ID = "yuji_consolidation_tick"
WATCHDOG_JOB_ID = "yuji_consolidation_watchdog"
WATCHDOG_INTERVAL_S = 60

_reconciled: set[tuple[int, int]] = set()
_lock = asyncio.Lock()


async def ensure_reconciled(core: Yuji) -> None:
    """Reconcile once per opened core and term of leadership, before its first batch
    (a new leader fails what the one before it left open)."""
    async with _lock:
        term = (id(core), core.deployment.leader.term)
        if term in _reconciled:
            return
        report = await core.consolidation.reconcile()
        _reconciled.add(term)
        if report.failed or report.fixes:
            logger.warning(
                f"yuji consolidation: start-up reconcile failed {len(report.failed)} open "
                f"batch(es), moved {len(report.fixes)} watermark(s) back"
            )


async def tick() -> None:
    core = runtime.leading()
    if core is None:
        return
    await run_tick(core)


async def run_tick(core: Yuji) -> str:
    """One safety tick (also the start): reconcile once, then make sure the scheduler
    runs and looks now; returns what happened (for logs and tests)."""
    await ensure_reconciled(core)
    if core.models.consolidation is None:
        return "skipped: no model configured"
    if core.consolidation.start() is None:
        return "skipped: closed"
    core.consolidation.wake.set()
    return "scheduler running"


async def on_gain() -> None:
    """This process became the leader: reconcile and run the scheduler now."""
    await reconcile()


async def on_lose() -> None:
    core = runtime.started()
    if core is not None:
        await core.consolidation.stop()


async def watchdog() -> None:
    core = runtime.leading()
    if core is None:
        return
    await core.consolidation.watchdog()


async def reconcile() -> None:
    core = runtime.leading()
    if core is None:
        return
    text = await run_tick(core)
    logger.info(f"yuji consolidation: {text}")


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
