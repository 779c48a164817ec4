"""`/unmute` (admin): reply again."""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from ._common import require_admin, runtime, scope_of, slash


@slash("unmute")
async def unmute(bot: Bot, event: Event, _text: str) -> str:
    await require_admin(bot, event)
    return await runtime.core().chat_commands.unmute(scope_of(event))
