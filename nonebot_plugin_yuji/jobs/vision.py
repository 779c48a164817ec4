"""Scheduled job: describe new images with the vision model (`core.vision.run_once`).

Scheduled only when `YUJI_VISION_LLM_MODEL` is set; every `YUJI_VISION_INTERVAL_S`
it describes a few images not seen before and releases ones stuck in the queue.
"""

from __future__ import annotations

from nonebot import logger, require

require("nonebot_plugin_apscheduler")

from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from memory_core import Settings, Yuji  # noqa: E402

from .. import runtime  # noqa: E402, TID252 (plugin modules load under two names)

JOB_ID = "yuji_vision"


async def describe_images() -> None:
    core = runtime.leading()
    if core is None:
        return
    await run_tick(core)


async def run_tick(core: Yuji) -> str:
    try:
        report = await core.vision.run_once()
    except Exception as exc:  # a tick must never take the scheduler down
        logger.exception("yuji vision tick failed")
        return f"error: {exc}"
    if report.described or report.failed or report.released:
        logger.info(
            f"yuji vision: {report.described} described, {report.failed} failed, "
            f"{report.released} released"
        )
    return f"{report.described} described"


def schedule(settings: Settings) -> None:
    if settings.model_for("vision") is None:
        return
    scheduler.add_job(
        describe_images,
        "interval",
        seconds=settings.vision_interval_s,
        id=JOB_ID,
        replace_existing=True,
        max_instances=1,
        coalesce=True,
    )
