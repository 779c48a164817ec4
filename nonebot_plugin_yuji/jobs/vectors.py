"""Scheduled jobs: keep the vector index fresh by running `yuji embed` as a child
process, and embed recent chat for recall.

Every consolidation tick the first asks whether memories or aliases changed since
the index was written (consolidation batches and the nightly run are what change
them) and, if so, starts the embed process. Every `MESSAGES_EVERY_S` the second
embeds the messages not consolidated yet that have no vector (in a worker thread,
`core.message_vectors`), so a message is findable by meaning within a minute of
arrival.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from nonebot import logger, require

require("nonebot_plugin_apscheduler")

from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from memory_core import Settings, Yuji, needs_embedding, run_embed_process  # noqa: E402

from .. import runtime  # noqa: E402, TID252 (plugin modules load under two names)

JOB_ID = "yuji_vectors_embed"
MESSAGES_JOB_ID = "yuji_message_vectors"
MESSAGES_EVERY_S = 15
MESSAGE_BATCHES = 8
"""Batches embedded per run at most (the rest waits for the next run)."""
STARTUP_DELAY_S = 30
ALERT_KEY = "vectors-embed"


async def refresh_vectors() -> None:
    core = runtime.leading()
    if core is None:
        return
    await refresh(core)


async def refresh(core: Yuji) -> bool:
    """One tick; True when an embed process ran and succeeded."""
    if core.vectors is None:
        return False
    if not await needs_embedding(core.memory_repo, core.vector_place, core.vectors.embedder):
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


async def embed_messages() -> None:
    core = runtime.leading()
    if core is None or core.message_vectors is None:
        return
    try:
        await core.message_vectors.catch_up(MESSAGE_BATCHES)
    except Exception as exc:  # the next run tries again; words still find every message
        logger.opt(exception=exc).warning("yuji: embedding recent messages failed")


def schedule(settings: Settings) -> None:
    if settings.vector_mode == "off":
        return
    scheduler.add_job(
        embed_messages,
        "interval",
        seconds=MESSAGES_EVERY_S,
        id=MESSAGES_JOB_ID,
        replace_existing=True,
        max_instances=1,
        coalesce=True,
    )
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
