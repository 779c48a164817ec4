"""What every command shares: one matcher, the chat's scope, who counts as admin, and
answering.

Each command module registers an action under its names (`@slash("why", "为什么")`);
one matcher serves them all. Why not one `on_command` per command: NoneBot checks every
matcher for every event of the bot, each in a task of its own with its rule's checkers
in a task group of their own, so eleven command matchers cost each message of a busy
chat some fifty tasks where one costs three (docs/plugin.md has the measurements).
NoneBot's command parsing is the same (`nonebot.rule.command` teaches its prefix trie
the names), and so is blocking: only a message that is one of yuji's commands matches.

`_run` is the one place an error becomes a Chinese line (via
`memory_core.chat.texts.error_text`); answers are sent as plain text segments so
nothing stored (a memory, a card) is ever parsed as a CQ code.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from nonebot import logger, on_message
from nonebot.adapters import Bot, Event, Message
from nonebot.adapters.onebot import v11
from nonebot.consts import CMD_KEY, PREFIX_KEY
from nonebot.params import CommandArg
from nonebot.rule import command
from nonebot.typing import T_State

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
from ..direct import DirectRule  # noqa: TID252
from ..ingest import committed  # noqa: TID252
from ..platforms import experience_of as experience_of  # noqa: TID252
from ..platforms import (  # noqa: TID252
    is_chat_admin,
    is_group,
    plain,
)
from ..platforms import is_superuser as is_superuser  # noqa: TID252
from ..platforms import mentioned_ids as mentioned_ids  # noqa: TID252
from ..platforms import quoted_id as quoted_id  # noqa: TID252
from ..platforms import scope_of as scope_of  # noqa: TID252

Action = Callable[[Bot, Event, str], Awaitable[str]]
"""A command: the bot, the event and the text after the command -> the line to send."""
_ACTIONS: dict[str, Action] = {}


def slash(*names: str) -> Callable[[Action], Action]:
    """Register a command's action under its names (the first is its name, the rest
    aliases)."""

    def register(action: Action) -> Action:
        command(*names)  # NoneBot's prefix trie learns the names, as on_command does
        for name in names:
            _ACTIONS[name] = action
        return action

    return register


async def _ours(_bot: Bot, _event: Event, state: T_State) -> bool:
    """One of yuji's commands, while yuji is started (in someone else's bot a failed
    start leaves the plugin inactive)."""
    cmd = state.get(PREFIX_KEY, {}).get(CMD_KEY)
    return (
        runtime.started() is not None and cmd is not None and len(cmd) == 1 and cmd[0] in _ACTIONS
    )


_MATCHERS = matcher_settings()
commands = on_message(
    rule=DirectRule(_ours), priority=_MATCHERS.command_priority, block=_MATCHERS.command_block
)
"""Every command of yuji's: `YUJI_COMMAND_PRIORITY` / `YUJI_COMMAND_BLOCK` (docs/plugin.md)."""


@commands.handle()
async def _run(
    bot: Bot, event: Event, state: T_State, args: Annotated[Message[Any], CommandArg()]
) -> None:
    action = _ACTIONS[state[PREFIX_KEY][CMD_KEY][0]]
    await committed(event)  # the command message may be evidence, or the chat's newest
    try:
        text = await action(bot, event, args.extract_plain_text())
    except Exception as exc:
        if not isinstance(exc, YujiError):
            logger.opt(exception=exc).error("yuji: command failed")
        text = error_text(exc)
    await commands.finish(plain(bot, text))


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


async def is_admin(bot: Bot, event: Event) -> bool:
    """A superuser, or an admin of this group (asked of the client only when needed)."""
    return await is_superuser(bot, event) or (is_group(event) and await is_chat_admin(bot, event))


async def require_group_admin(bot: Bot, event: Event) -> None:
    """Admin of a group (or a superuser anywhere); a private chat does not qualify."""
    if await is_superuser(bot, event):
        return
    if not is_group(event):
        raise NotPermitted(SUPERUSER_ONLY)
    if not await is_chat_admin(bot, event):
        raise NotPermitted(ADMIN_ONLY)
