"""A member leaving a group (QQ's `group_decrease`: left, kicked; Telegram's
`left_chat_member`): recorded for carrying (`core.carrying.left`), so nothing of theirs
is carried into that group any more unless they speak there again
(docs/chat-commands.md#带话). The account itself leaving is no member's departure."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from nonebot import logger, on_notice
from nonebot.adapters import Bot as BaseBot
from nonebot.adapters import Event as BaseEvent
from nonebot.adapters.onebot.v11 import NoticeEvent
from nonebot.adapters.telegram import Bot as TelegramBot
from nonebot.adapters.telegram.event import LeftChatMemberEvent
from nonebot.typing import T_State

from memory_core import group_scope

from . import runtime
from .direct import DirectRule
from .telegram_convert import PLATFORM


def leaves_a_group(data: Mapping[str, Any]) -> bool:
    """A member (not the account) left or was removed from a group: decided on the raw
    JSON, so the ingest adapter passes it on to the handlers (frames.needs_handlers)."""
    return (
        data.get("notice_type") == "group_decrease"
        and str(data.get("user_id", "")).isdecimal()
        and str(data.get("group_id", "")).isdecimal()
        and str(data.get("user_id")) != str(data.get("self_id", "-"))
    )


async def _is_leave_notice(_bot: BaseBot, event: BaseEvent, _state: T_State) -> bool:
    """A base-typed, async rule (why: ops_notices._is_offline_notice)."""
    return isinstance(event, NoticeEvent) and leaves_a_group(event.model_dump())


left = on_notice(rule=DirectRule(_is_leave_notice), priority=1, block=False)


@left.handle()
async def _left(event: NoticeEvent) -> None:
    data = event.model_dump()
    at = datetime.fromtimestamp(int(data.get("time") or 0), UTC)
    await _record(group_scope(data["group_id"]), str(data["user_id"]), at)


def telegram_departure(
    event: LeftChatMemberEvent, account: str
) -> tuple[str, str, datetime] | None:
    """(scope, user id, when) of a member leaving a Telegram group; None for the
    account itself."""
    user = str(event.left_chat_member.id)
    if user == account:
        return None
    return group_scope(event.chat.id, PLATFORM), user, datetime.fromtimestamp(event.date, UTC)


async def _is_telegram_leave(_bot: BaseBot, event: BaseEvent, _state: T_State) -> bool:
    return isinstance(event, LeftChatMemberEvent)


telegram_left = on_notice(rule=DirectRule(_is_telegram_leave), priority=1, block=False)


@telegram_left.handle()
async def _telegram_left(bot: TelegramBot, event: LeftChatMemberEvent) -> None:
    found = telegram_departure(event, bot.self_id)
    if found is not None:
        await _record(*found)


async def _record(scope: str, user_id: str, at: datetime) -> None:
    try:
        await runtime.core().carrying.left(scope, user_id, at)
    except Exception as exc:  # a lost leave only keeps a member longer: logged, not raised
        logger.warning(f"yuji departures: not recorded ({exc!r})")
