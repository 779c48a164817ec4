"""Scheduled job: keep the vector index fresh by running `yuji embed` as a child process.

Every consolidation tick it asks whether memories or aliases changed since the index
was written (consolidation batches and the nightly run are what change them) and,
if so, starts the embed process; the bot itself only ever embeds questions.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from nonebot import logger, require

require("nonebot_plugin_apscheduler")

from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from memory_core import Settings, Yuji, needs_embedding, run_embed_process  # noqa: E402

from . import runtime  # noqa: E402

JOB_ID = "yuji_vectors_embed"
STARTUP_DELAY_S = 30
ALERT_KEY = "vectors-embed"


async def refresh_vectors() -> None:
    core = runtime.started()
    if core is None:
        return
    await refresh(core)


async def refresh(core: Yuji) -> bool:
    """One tick; True when an embed process ran and succeeded."""
    if core.vectors is None:
        return False
    if not await needs_embedding(core.memory_repo, core.settings, core.vectors.embedder):
        return False
    run = await run_embed_process(core.settings)
    if run.returncode != 0:
        text = f"yuji embed failed ({run.returncode}): {run.stderr_tail[-500:]}"
        logger.error(text)
        core.alerts.fire(ALERT_KEY, text)
        return False
    logger.info(f"yuji embed: {run.report}")
    core.alerts.recover(ALERT_KEY, "yuji embed works again")
    return True


def schedule(settings: Settings) -> None:
    if settings.vector_mode == "off":
        return
    scheduler.add_job(
        refresh_vectors,
        "interval",
        seconds=settings.consolidation_tick_s,
        id=JOB_ID,
        replace_existing=True,
        max_instances=1,
        coalesce=True,
        # Soon after start too, so a fresh install or a new model gets its index.
        next_run_time=datetime.now(UTC) + timedelta(seconds=STARTUP_DELAY_S),
    )
