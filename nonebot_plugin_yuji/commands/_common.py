"""What every command shares: the chat's scope, who counts as admin, and answering.

`answer` is the one place an error becomes a Chinese line (via
`memory_core.chat.texts.error_text`); answers are sent as plain text segments so
nothing stored (a memory, a card) is ever parsed as a CQ code.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NoReturn

from nonebot import logger
from nonebot.adapters import Bot, Event
from nonebot.adapters.onebot import v11
from nonebot.matcher import Matcher, current_bot
from nonebot.rule import Rule

from memory_core import (
    ADMIN_ONLY,
    GROUP_ONLY,
    SUPERUSER_ONLY,
    NotPermitted,
    UsageError,
    YujiError,
    error_text,
)

from .. import runtime as runtime  # noqa: TID252 (plugin modules load under two names)
from ..backfill_convert import history_parser as history_parser  # noqa: TID252
from ..config import matcher_settings  # noqa: TID252
from ..platforms import experience_of as experience_of  # noqa: TID252
from ..platforms import (  # noqa: TID252
    is_chat_admin,
    is_group,
    plain,
)
from ..platforms import is_superuser as is_superuser  # noqa: TID252
from ..platforms import quoted_id as quoted_id  # noqa: TID252
from ..platforms import scope_of as scope_of  # noqa: TID252
from ..runtime import active  # noqa: TID252

_MATCHERS = matcher_settings()
COMMAND: dict[str, Any] = {
    "priority": _MATCHERS.command_priority,
    "block": _MATCHERS.command_block,
    "rule": Rule(active),
}
"""Every command's matcher options: `YUJI_COMMAND_PRIORITY` / `YUJI_COMMAND_BLOCK`, and
inert while yuji is not started (docs/plugin.md)."""


def qq_group_id(event: Event) -> int:
    """A QQ group's number (what has a history API to backfill from)."""
    if not isinstance(event, v11.GroupMessageEvent):
        raise UsageError(GROUP_ONLY if not is_group(event) else NO_HISTORY)
    return event.group_id


NO_HISTORY = "这个平台没有给机器人的历史消息接口，补拉不了（只有 QQ 群可以）。"


async def require_admin(bot: Bot, event: Event) -> None:
    """Group admin or a superuser; in a private chat its owner counts as admin."""
    scope_of(event)
    if not is_group(event) or await is_superuser(bot, event):
        return
    if await is_chat_admin(bot, event):
        return
    raise NotPermitted(ADMIN_ONLY)


async def require_group_admin(bot: Bot, event: Event) -> None:
    """Admin of a group (or a superuser anywhere); a private chat does not qualify."""
    if await is_superuser(bot, event):
        return
    if not is_group(event):
        raise NotPermitted(SUPERUSER_ONLY)
    if not await is_chat_admin(bot, event):
        raise NotPermitted(ADMIN_ONLY)


def matcher_bot() -> Bot:
    return current_bot.get()


async def answer(matcher: type[Matcher], action: Callable[[], Awaitable[str]]) -> NoReturn:
    try:
        text = await action()
    except Exception as exc:
        if not isinstance(exc, YujiError):
            logger.opt(exception=exc).error("yuji: command failed")
        text = error_text(exc)
    await matcher.finish(plain(matcher_bot(), text))
