"""This process among the bot processes on one store: it records the QQ accounts it
serves (at each connect, and every ACCOUNTS_EVERY_S), and takes part in leadership
(`core.deployment.leader`), whose gain and loss start and stop the consolidation
scheduler; the other once-only jobs check `runtime.leading()` at each tick.
"""

from __future__ import annotations

from nonebot import get_driver, logger, require
from nonebot.adapters.onebot.v11 import Bot

require("nonebot_plugin_apscheduler")

from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from memory_core import Yuji  # noqa: E402

from . import runtime  # noqa: E402
from .jobs import consolidation as jobs_consolidation  # noqa: E402

ACCOUNTS_JOB_ID = "yuji_accounts"
ACCOUNTS_EVERY_S = 60

driver = get_driver()


@driver.on_bot_connect
async def _connected(bot: Bot) -> None:
    core = runtime.started()
    if core is None:
        return
    try:
        await core.deployment.accounts.connected(str(bot.self_id))
    except Exception as exc:  # the next refresh records it
        logger.opt(exception=exc).warning(f"yuji: account {bot.self_id} not recorded yet")


async def refresh_accounts() -> None:
    core = runtime.started()
    if core is None:
        return
    try:
        await core.deployment.accounts.refresh()
    except Exception as exc:
        logger.opt(exception=exc).warning("yuji: accounts not refreshed")


async def start(core: Yuji) -> None:
    """Take part in leadership: the first try now (so a lone process leads before its
    first job tick), then every few seconds."""
    leader = core.deployment.leader
    leader.on_gain.append(jobs_consolidation.on_gain)
    leader.on_lose.append(jobs_consolidation.on_lose)
    await leader.step()
    leader.start()
    scheduler.add_job(
        refresh_accounts,
        "interval",
        seconds=ACCOUNTS_EVERY_S,
        id=ACCOUNTS_JOB_ID,
        replace_existing=True,
        max_instances=1,
        coalesce=True,
    )
