"""Backfill: every group at each (re)connect of a bot, and every
`YUJI_BACKFILL_INTERVAL_S` seconds (default 30 min).

On connect (the first one after a start, and every reconnect) each group's history
is paged back until the last message archived before that moment
(`core.chat.catch_up`, within `YUJI_BACKFILL_CATCHUP_MAX`), so a kill, a dropped
socket or a full shutdown drain loses nothing the client still has. It runs in the
background; the connection does not wait for it. `YUJI_BACKFILL_INTERVAL_S=0` turns
every automatic backfill off, this one included.

A message the archive dropped (the database refused the row itself; an outage or a
full disk drops nothing) leaves a gap in its group: every `GAP_CHECK_S`, while the
store takes writes, each gap is paged back once through the group's history
(`core.archive.take_gaps`), so what the client still has comes back.

Groups come from each connected bot's `get_group_list`, else from the archive; the
names in that list go to the console (chat_names.py).
A failure in one group is logged and the next group goes on.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from nonebot import get_bots, get_driver, logger, require
from nonebot.adapters.onebot.v11 import Bot

require("nonebot_plugin_apscheduler")

from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from memory_core import Settings  # noqa: E402

from .. import chat_names, runtime  # noqa: E402, TID252 (plugin modules load under two names)
from ..backfill_convert import history_parser  # noqa: E402, TID252

JOB_ID = "yuji_backfill"
GAP_JOB_ID = "yuji_backfill_gaps"
GAP_CHECK_S = 30


async def group_ids(bot: Bot) -> list[int]:
    try:
        groups: Any = await bot.get_group_list()
    except Exception as exc:
        logger.warning(f"yuji backfill: get_group_list failed ({exc!r}); using archived groups")
        groups = None
    await chat_names.name_groups(groups)
    if isinstance(groups, list):
        ids = {str(g.get("group_id", "")) for g in groups if isinstance(g, dict)}  # pyright: ignore[reportUnknownVariableType]
        return sorted(int(i) for i in ids if i.isdecimal())
    scopes = await runtime.core().archive.scopes()
    return sorted(int(s.split(":", 1)[1]) for s in scopes if s.startswith("group:"))


async def backfill_all() -> None:
    core = runtime.started()
    if core is None:
        return
    for bot in list(get_bots().values()):
        if not isinstance(bot, Bot):
            continue
        for group_id in await group_ids(bot):
            try:
                await core.chat.backfill(
                    group_id,
                    call_api=bot.call_api,
                    parse=history_parser(group_id, str(bot.self_id), core.clock.now),
                    limit=core.settings.backfill_max,
                )
            except Exception as exc:
                logger.opt(exception=exc).error(f"yuji backfill of group {group_id} failed")


async def catch_up_bot(bot: Bot, heard_before: datetime) -> None:
    """Page each group of `bot` back to the last message archived before `heard_before`."""
    core = runtime.started()
    if core is None:
        return
    for group_id in await group_ids(bot):
        try:
            report = await core.chat.catch_up(
                group_id,
                call_api=bot.call_api,
                parse=history_parser(group_id, str(bot.self_id), core.clock.now),
                heard_before=heard_before,
            )
        except Exception as exc:
            logger.opt(exception=exc).error(f"yuji catch-up of group {group_id} failed")
            continue
        if not report.caught_up:
            logger.warning(f"yuji catch-up of group {group_id}: {report.error}")


async def backfill_gaps() -> None:
    """Page back once over each group where the archive dropped a message."""
    core = runtime.started()
    if core is None or core.archive.health().held_s is not None:
        return  # the store refuses writes now: the gaps wait for it
    bots = [b for b in get_bots().values() if isinstance(b, Bot)]
    for scope, since in core.archive.take_gaps().items():
        if not scope.startswith("group:") or not bots:
            continue  # private chats have no history to ask for
        group_id = int(scope.split(":", 1)[1])
        for bot in bots:
            try:
                report = await core.chat.catch_up(
                    group_id,
                    call_api=bot.call_api,
                    parse=history_parser(group_id, str(bot.self_id), core.clock.now),
                    heard_before=since,
                )
            except Exception as exc:
                logger.opt(exception=exc).error(f"yuji gap backfill of group {group_id} failed")
                continue
            logger.warning(
                f"yuji: group {group_id} backfilled over a dropped message: "
                f"{report.new} new of {report.fetched} fetched"
            )
            break


_catch_ups: set[asyncio.Task[None]] = set()
driver = get_driver()


@driver.on_bot_connect
async def _on_connect(bot: Bot) -> None:
    core = runtime.started()
    if core is None:
        return
    if core.settings.backfill_interval_s <= 0:
        return  # automatic backfill is off: only /backfill
    heard_before = core.clock.now()
    task = asyncio.create_task(catch_up_bot(bot, heard_before), name="yuji-catch-up")
    _catch_ups.add(task)
    task.add_done_callback(_catch_ups.discard)


def schedule(settings: Settings) -> None:
    interval = settings.backfill_interval_s
    if interval <= 0:
        return
    scheduler.add_job(
        backfill_all,
        "interval",
        seconds=interval,
        id=JOB_ID,
        replace_existing=True,
        max_instances=1,
        coalesce=True,
    )
    scheduler.add_job(
        backfill_gaps,
        "interval",
        seconds=GAP_CHECK_S,
        id=GAP_JOB_ID,
        replace_existing=True,
        max_instances=1,
        coalesce=True,
    )
