"""`/mute [duration]` (admin): stop waking and replying here; archiving goes on."""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from ._common import require_admin, runtime, scope_of, slash


@slash("mute", "闭嘴")
async def mute(bot: Bot, event: Event, text: str) -> str:
    await require_admin(bot, event)
    return await runtime.core().chat_commands.mute(scope_of(event), text)
