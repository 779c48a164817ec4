"""`/unmute` (admin): reply again."""

from __future__ import annotations

from nonebot import on_command
from nonebot.adapters import Bot, Event

from ._common import COMMAND, answer, require_admin, runtime, scope_of

unmute = on_command("unmute", **COMMAND)


@unmute.handle()
async def _unmute(bot: Bot, event: Event) -> None:
    async def action() -> str:
        await require_admin(bot, event)
        return await runtime.core().chat_commands.unmute(scope_of(event))

    await answer(unmute, action)
