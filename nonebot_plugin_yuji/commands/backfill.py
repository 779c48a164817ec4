"""`/backfill [n]` (admin, groups): fetch up to 200 missed messages and archive the new."""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from memory_core import UsageError, backfill_text

from ._common import (
    history_parser,
    qq_group_id,
    require_group_admin,
    runtime,
    slash,
)


def parse_count(raw: str, default: int) -> int:
    raw = raw.strip()
    if not raw:
        return default
    if not raw.isdecimal() or not 1 <= int(raw) <= 200:
        raise UsageError("用法：/backfill [条数]，条数 1 到 200")
    return int(raw)


@slash("backfill", "补拉")
async def backfill(bot: Bot, event: Event, text: str) -> str:
    await require_group_admin(bot, event)
    group_id = qq_group_id(event)
    core = runtime.core()
    limit = parse_count(text, core.settings.backfill_max)
    report = await core.chat.backfill(
        group_id,
        call_api=bot.call_api,
        parse=history_parser(group_id, str(bot.self_id), core.clock.now),
        limit=limit,
    )
    return backfill_text(report.fetched, report.new, report.duplicates, report.error)
