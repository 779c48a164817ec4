"""`core.carry_commands`: `/carry` and its forms (#45), answered as one Chinese text.

- `/carry`: the sender's choices, the chats their own words would reach now, and
  what would travel (listed in their private chat only: a group sees the count,
  never the words they said elsewhere);
- `/carry private on|off`, `/carry groups on|off`: the sender's own choice, kept per
  person (it applies from the next wake on, wherever they are);
- `/carry block`, `/carry unblock` (a group's admin): refuse anything carried into
  this group, or allow it again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from memory_core.errors import NotPermitted, UsageError
from memory_core.people.carrying import CarryView
from memory_core.storage import CarryChoice
from memory_core.types import is_group_scope, scope_platform

from . import carry_texts, texts

USAGE = (
    "用法：/carry 看设置；/carry private on|off 私聊里记不记得你在群里说的话；"
    "/carry groups on|off 你的别的群记不记得；群管理员：/carry block|unblock 本群拒绝或允许带入。"
)
SWITCHES = {"on": True, "开": True, "off": False, "关": False}


class CarryingPort(Protocol):
    """`core.carrying` (memory_core/people/carrying.py)."""

    async def view(self, platform: str, user_id: str) -> CarryView: ...

    async def choose(
        self,
        platform: str,
        user_id: str,
        *,
        into_private: bool | None = None,
        into_groups: bool | None = None,
    ) -> CarryChoice: ...

    async def block(self, scope: str, by: str) -> None: ...

    async def unblock(self, scope: str) -> None: ...

    async def blocked(self, scope: str) -> bool: ...


class CarryCommands:
    def __init__(self, carrying: CarryingPort) -> None:
        self.carrying = carrying

    async def carry(
        self,
        scope: str,
        args: str,
        *,
        user_id: str,
        is_admin: Callable[[], Awaitable[bool]],
    ) -> str:
        words = args.strip().lower().split()
        platform = scope_platform(scope)
        if not words:
            view = await self.carrying.view(platform, user_id)
            blocked = await self.carrying.blocked(scope) if is_group_scope(scope) else None
            return carry_texts.state_text(view, in_group=is_group_scope(scope), blocked=blocked)
        if words[0] in ("block", "unblock") and len(words) == 1:
            if not is_group_scope(scope):
                raise UsageError(texts.GROUP_ONLY)
            if not await is_admin():
                raise NotPermitted(texts.ADMIN_ONLY)
            if words[0] == "block":
                await self.carrying.block(scope, user_id)
            else:
                await self.carrying.unblock(scope)
            return carry_texts.block_text(words[0] == "block")
        if len(words) == 2 and words[0] in ("private", "groups") and words[1] in SWITCHES:
            on = SWITCHES[words[1]]
            if words[0] == "private":
                choice = await self.carrying.choose(platform, user_id, into_private=on)
            else:
                choice = await self.carrying.choose(platform, user_id, into_groups=on)
            return carry_texts.choice_text(words[0], choice)
        raise UsageError(USAGE)
