"""`/forget <id>` (admin): retract a memory of this chat (history kept)."""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from ._common import require_admin, runtime, scope_of, slash


@slash("forget", "忘掉")
async def forget(bot: Bot, event: Event, text: str) -> str:
    await require_admin(bot, event)
    return await runtime.core().chat_commands.forget(scope_of(event), text, by=event.get_user_id())
