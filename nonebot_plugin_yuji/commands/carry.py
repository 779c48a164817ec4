"""`/carry` (anyone, about themselves): whether their own words said in a group follow
them to their private chat and their other groups; `/carry block|unblock` (a group's
admin): refuse anything carried into this group (docs/chat-commands.md)."""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from ._common import is_admin, runtime, scope_of, slash


@slash("carry", "带话")
async def carry(bot: Bot, event: Event, text: str) -> str:
    return await runtime.core().carry_commands.carry(
        scope_of(event),
        text,
        user_id=event.get_user_id(),
        is_admin=lambda: is_admin(bot, event),
    )
