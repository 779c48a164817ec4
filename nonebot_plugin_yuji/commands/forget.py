"""`/forget <id>` (admin): retract a memory of this chat (history kept)."""

from __future__ import annotations

from typing import Annotated, Any

from nonebot import on_command
from nonebot.adapters import Bot, Event, Message
from nonebot.params import CommandArg

from ._common import COMMAND, answer, require_admin, runtime, scope_of

forget = on_command("forget", aliases={"忘掉"}, **COMMAND)


@forget.handle()
async def _forget(bot: Bot, event: Event, args: Annotated[Message[Any], CommandArg()]) -> None:
    async def action() -> str:
        await require_admin(bot, event)
        return await runtime.core().chat_commands.forget(
            scope_of(event), args.extract_plain_text(), by=event.get_user_id()
        )

    await answer(forget, action)
