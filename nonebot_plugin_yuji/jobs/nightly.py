"""Scheduled jobs of the nightly pipeline.

- night (cron at YUJI_NIGHTLY_TIME in YUJI_TIMEZONE, one instance, coalesced, a missed
  run still fires within a day): `core.nightly.run(trigger="schedule")`, which catches
  up every missed day in order. The console can move the time live; `follow` moves
  the job with it, so the job fires where the day now ends;
- retry (every RETRY_TICK_S): `core.nightly.retry_due()`, the chats whose failed run is
  due again (2 h after it failed, until the circuit opens).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from zoneinfo import ZoneInfo

from nonebot import logger, require

require("nonebot_plugin_apscheduler")

from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from memory_core import Settings, StepReport, parse_cutoff  # noqa: E402

from .. import runtime  # noqa: E402, TID252 (plugin modules load under two names)

NIGHT_JOB_ID = "yuji_nightly"
RETRY_JOB_ID = "yuji_nightly_retry"
RETRY_TICK_S = 600
MISFIRE_GRACE_S = 24 * 3600


def summary(reports: Sequence[StepReport]) -> str:
    """One log line for a run: chats and steps by outcome. Pure."""
    counts: dict[str, int] = {}
    for r in reports:
        counts[r.outcome] = counts.get(r.outcome, 0) + 1
    chats = len({r.scope for r in reports if r.scope != "*"})
    parts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
    return f"{chats} chat(s): {parts or 'nothing to do'}"


def _log(kind: str, reports: Sequence[StepReport]) -> None:
    failed = [r for r in reports if r.outcome == "failed"]
    text = f"yuji nightly {kind}: {summary(reports)}"
    if failed:
        logger.warning(
            text + "; " + "; ".join(f"{r.scope} {r.day} {r.step}: {r.detail}" for r in failed)
        )
    else:
        logger.info(text)


async def night() -> None:
    core = runtime.leading()
    if core is None:
        return
    try:
        _log("run", await core.nightly.run(trigger="schedule"))
    except Exception:  # a job must never take the scheduler down
        logger.exception("yuji nightly run crashed")


async def retry() -> None:
    core = runtime.leading()
    if core is None:
        return
    try:
        reports = await core.nightly.retry_due()
    except Exception:
        logger.exception("yuji nightly retry crashed")
        return
    if reports:
        _log("retry", reports)


def cron_kwargs(nightly_time: str, timezone: str) -> dict[str, Any]:
    """The cron trigger fields of the nightly job. Pure."""
    cutoff = parse_cutoff(nightly_time)
    return {"hour": cutoff.hour, "minute": cutoff.minute, "timezone": ZoneInfo(timezone)}


def schedule(settings: Settings) -> None:
    follow(settings)
    scheduler.add_job(
        retry,
        "interval",
        seconds=RETRY_TICK_S,
        id=RETRY_JOB_ID,
        replace_existing=True,
        max_instances=1,
        coalesce=True,
    )


def follow(settings: Settings) -> None:
    """Schedule the night job at `settings.nightly_time` (replacing where it was)."""
    scheduler.add_job(
        night,
        "cron",
        **cron_kwargs(settings.nightly_time, settings.timezone),
        id=NIGHT_JOB_ID,
        replace_existing=True,
        max_instances=1,
        coalesce=True,
        misfire_grace_time=MISFIRE_GRACE_S,
    )
