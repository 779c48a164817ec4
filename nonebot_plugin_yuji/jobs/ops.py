"""Scheduled ops jobs.

- backup tick (every 5 minutes): `core.ops.backup_if_due()` backs up when
  YUJI_BACKUP_INTERVAL_S has passed since the last attempt (so restarts neither skip
  nor repeat backups); a failed backup is retried after 30 minutes, and alerts;
- daily (5 minutes after start, then every 24 hours): attachment retention, then the
  capacity sentinel (`core.ops.daily()`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from nonebot import logger, require

require("nonebot_plugin_apscheduler")

from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from memory_core import Settings  # noqa: E402

from .. import runtime  # noqa: E402, TID252 (plugin modules load under two names)

BACKUP_JOB_ID = "yuji_ops_backup"
DAILY_JOB_ID = "yuji_ops_daily"
BACKUP_TICK_S = 300
FIRST_BACKUP_AFTER = timedelta(minutes=1)
FIRST_DAILY_AFTER = timedelta(minutes=5)


async def backup_tick() -> None:
    core = runtime.leading()
    if core is None:
        return
    try:
        await core.ops.backup_if_due()
    except Exception:  # backup() alerted already; the scheduler must live on
        logger.exception("yuji ops: scheduled backup failed")


async def daily() -> None:
    core = runtime.leading()
    if core is None:
        return
    try:
        cleaned, capacity = await core.ops.daily()
    except Exception:
        logger.exception("yuji ops: daily chores failed")
        return
    logger.info(
        f"yuji ops: {cleaned.cleaned} attachment file(s) past retention cleaned; "
        f"data uses {capacity.sizes.total} bytes (limit {capacity.limit_bytes})"
    )


def schedule(settings: Settings) -> None:
    now = datetime.now(UTC)
    scheduler.add_job(
        backup_tick,
        "interval",
        seconds=max(1, min(BACKUP_TICK_S, settings.backup_interval_s)),
        next_run_time=now + FIRST_BACKUP_AFTER,
        id=BACKUP_JOB_ID,
        replace_existing=True,
        max_instances=1,
        coalesce=True,
    )
    scheduler.add_job(
        daily,
        "interval",
        hours=24,
        next_run_time=now + FIRST_DAILY_AFTER,
        id=DAILY_JOB_ID,
        replace_existing=True,
        max_instances=1,
        coalesce=True,
    )
