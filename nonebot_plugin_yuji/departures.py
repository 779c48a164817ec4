"""A member leaving a QQ group (`group_decrease`: left, kicked): recorded for carrying
(`core.carrying.left`), so nothing of theirs is carried into that group any more unless
they speak there again (docs/chat-commands.md#带话). The account itself leaving is no
member's departure."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from nonebot import logger, on_notice
from nonebot.adapters import Bot as BaseBot
from nonebot.adapters import Event as BaseEvent
from nonebot.adapters.onebot.v11 import NoticeEvent
from nonebot.typing import T_State

from memory_core import group_scope

from . import runtime
from .direct import DirectRule


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
    try:
        await runtime.core().carrying.left(group_scope(data["group_id"]), str(data["user_id"]), at)
    except Exception as exc:  # a lost leave only keeps a member longer: logged, not raised
        logger.warning(f"yuji departures: not recorded ({exc!r})")
