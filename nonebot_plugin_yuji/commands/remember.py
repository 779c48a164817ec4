"""`/remember <text>` (admin): a memory now, resting on this very command message."""

from __future__ import annotations

from typing import Annotated, Any

from nonebot import on_command
from nonebot.adapters import Bot, Event, Message
from nonebot.params import CommandArg

from ._common import COMMAND, answer, experience_of, require_admin, runtime, scope_of

remember = on_command("remember", aliases={"记住"}, **COMMAND)


@remember.handle()
async def _remember(bot: Bot, event: Event, args: Annotated[Message[Any], CommandArg()]) -> None:
    async def action() -> str:
        await require_admin(bot, event)
        core = runtime.core()
        command = experience_of(bot, event, now=core.clock.now())
        if command is None:
            return "这里用不了这个命令。"
        done = await core.chat_commands.remember(
            scope_of(event), args.extract_plain_text(), command=command, by=event.get_user_id()
        )
        return done.text

    await answer(remember, action)
