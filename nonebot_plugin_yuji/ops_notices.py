"""The QQ account going offline: an alert, and a recovery when it is back.

NapCat sends a `bot_offline` notice when the account is kicked or logged out, while
the WebSocket may stay up; heartbeats carry `status.online`. Either saying "offline"
fires `bot_offline:<self_id>` (deduplicated by core.alerts; heartbeats only on the change);
a heartbeat saying "online" recovers it.
"""

from __future__ import annotations

from typing import Any

from nonebot import on_metaevent, on_notice
from nonebot.adapters import Bot as BaseBot
from nonebot.adapters import Event as BaseEvent
from nonebot.adapters.onebot.v11 import Bot, HeartbeatMetaEvent, NoticeEvent
from nonebot.typing import T_State

from memory_core import (
    bot_heartbeat_offline_text,
    bot_offline_key,
    bot_offline_text,
    bot_online_text,
)

from . import runtime
from .direct import DirectRule

OFFLINE_NOTICE = "bot_offline"


async def _is_offline_notice(_bot: BaseBot, event: BaseEvent, _state: T_State) -> bool:
    """Rules take base types and test `isinstance`: a rule parameter of another type
    makes NoneBot skip with an exception, whose traceback keeps the event alive until
    a full garbage collection (see docs/plugin.md); async and called directly
    (`DirectRule`), as NoneBot asks it about every event of the bot."""
    return isinstance(event, NoticeEvent) and event.notice_type == OFFLINE_NOTICE


async def _heartbeat_matters(bot: BaseBot, event: BaseEvent, _state: T_State) -> bool:
    """Only a heartbeat that changes the state is handled (NoneBot logs every handled
    event, and heartbeats come every few seconds)."""
    core = runtime.started()
    if core is None or not isinstance(bot, Bot) or not isinstance(event, HeartbeatMetaEvent):
        return False
    failing = core.alerts.is_failing(bot_offline_key(bot.self_id))
    return failing if event.status.online else not failing


bot_offline = on_notice(rule=DirectRule(_is_offline_notice), priority=1, block=False)
heartbeat = on_metaevent(rule=DirectRule(_heartbeat_matters), priority=1, block=False)


@bot_offline.handle()
async def _offline(bot: Bot, event: NoticeEvent) -> None:
    extra: dict[str, Any] = event.model_dump()
    tag, message = extra.get("tag"), extra.get("message")
    runtime.core().alerts.fire(
        bot_offline_key(bot.self_id),
        bot_offline_text(
            bot.self_id,
            tag if isinstance(tag, str) else None,
            message if isinstance(message, str) else None,
        ),
    )


@heartbeat.handle()
async def _heartbeat(bot: Bot, event: HeartbeatMetaEvent) -> None:
    alerts = runtime.core().alerts
    if event.status.online:
        alerts.recover(bot_offline_key(bot.self_id), bot_online_text(bot.self_id))
    else:
        alerts.fire(bot_offline_key(bot.self_id), bot_heartbeat_offline_text(bot.self_id))
