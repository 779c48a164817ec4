"""What every command shares: the chat's scope, who counts as admin, and answering.

`answer` is the one place an error becomes a Chinese line (via
`memory_core.chat.texts.error_text`); answers are sent as plain text segments so
nothing stored (a memory, a card) is ever parsed as a CQ code.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NoReturn

from nonebot import logger
from nonebot.adapters.onebot.v11 import (
    Bot,
    GroupMessageEvent,
    MessageEvent,
    MessageSegment,
    PrivateMessageEvent,
)
from nonebot.matcher import Matcher
from nonebot.permission import SUPERUSER
from nonebot.rule import Rule

from memory_core import (
    ADMIN_ONLY,
    GROUP_ONLY,
    SUPERUSER_ONLY,
    NotPermitted,
    UsageError,
    YujiError,
    error_text,
    group_scope,
    private_scope,
)

from .. import runtime as runtime  # noqa: TID252 (plugin modules load under two names)
from ..archive_convert import convert as convert  # noqa: TID252
from ..archive_hooks import incoming_experience as incoming_experience  # noqa: TID252
from ..backfill_convert import history_parser as history_parser  # noqa: TID252
from ..config import matcher_settings  # noqa: TID252
from ..runtime import active  # noqa: TID252

_MATCHERS = matcher_settings()
COMMAND: dict[str, Any] = {
    "priority": _MATCHERS.command_priority,
    "block": _MATCHERS.command_block,
    "rule": Rule(active),
}
"""Every command's matcher options: `YUJI_COMMAND` / `YUJI_COMMAND_BLOCK`, and
inert while yuji is not started (docs/plugin.md#priorities)."""
ADMIN_ROLES = frozenset({"owner", "admin"})


def scope_of(event: MessageEvent) -> str:
    if isinstance(event, GroupMessageEvent):
        return group_scope(event.group_id)
    if isinstance(event, PrivateMessageEvent):
        return private_scope(event.user_id)
    raise UsageError("这里用不了这个命令。")


def group_id_of(event: MessageEvent) -> int:
    if not isinstance(event, GroupMessageEvent):
        raise UsageError(GROUP_ONLY)
    return event.group_id


async def is_superuser(bot: Bot, event: MessageEvent) -> bool:
    return await SUPERUSER(bot, event)


async def group_role(bot: Bot, event: GroupMessageEvent) -> str | None:
    """The sender's role from the event, else asked of the client (some omit it)."""
    if event.sender.role:
        return event.sender.role
    try:
        info: Any = await bot.get_group_member_info(
            group_id=event.group_id, user_id=event.user_id, no_cache=True
        )
    except Exception as exc:
        logger.warning(f"yuji: get_group_member_info failed: {exc!r}")
        return None
    role = info.get("role") if isinstance(info, Mapping) else None
    return role if isinstance(role, str) else None


async def require_admin(bot: Bot, event: MessageEvent) -> None:
    """Group owner/admin or a superuser; in a private chat its owner counts as admin."""
    if isinstance(event, PrivateMessageEvent) or await is_superuser(bot, event):
        return
    if isinstance(event, GroupMessageEvent) and await group_role(bot, event) in ADMIN_ROLES:
        return
    raise NotPermitted(ADMIN_ONLY)


async def require_group_admin(bot: Bot, event: MessageEvent) -> None:
    """Admin of a group (or a superuser anywhere); a private chat does not qualify."""
    if await is_superuser(bot, event):
        return
    if not isinstance(event, GroupMessageEvent):
        raise NotPermitted(SUPERUSER_ONLY)
    if await group_role(bot, event) not in ADMIN_ROLES:
        raise NotPermitted(ADMIN_ONLY)


async def answer(matcher: type[Matcher], action: Callable[[], Awaitable[str]]) -> NoReturn:
    try:
        text = await action()
    except Exception as exc:
        if not isinstance(exc, YujiError):
            logger.opt(exception=exc).error("yuji: command failed")
        text = error_text(exc)
    await matcher.finish(MessageSegment.text(text))
