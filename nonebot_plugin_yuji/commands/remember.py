"""`/remember <text>` (admin): a memory now, resting on this very command message."""

from __future__ import annotations

from typing import Annotated

from nonebot import on_command
from nonebot.adapters.onebot.v11 import Bot, Message, MessageEvent
from nonebot.params import CommandArg

from ._common import COMMAND, answer, incoming_experience, require_admin, runtime, scope_of

remember = on_command("remember", aliases={"记住"}, **COMMAND)


@remember.handle()
async def _remember(bot: Bot, event: MessageEvent, args: Annotated[Message, CommandArg()]) -> None:
    async def action() -> str:
        await require_admin(bot, event)
        core = runtime.core()
        command = incoming_experience(bot, event, now=core.clock.now())
        if command is None:
            return "这里用不了这个命令。"
        done = await core.chat_commands.remember(
            scope_of(event), args.extract_plain_text(), command=command, by=str(event.user_id)
        )
        return done.text

    await answer(remember, action)
