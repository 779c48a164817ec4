"""`/mute [duration]` (admin): stop waking and replying here; archiving goes on."""

from __future__ import annotations

from typing import Annotated, Any

from nonebot import on_command
from nonebot.adapters import Bot, Event, Message
from nonebot.params import CommandArg

from ._common import COMMAND, answer, require_admin, runtime, scope_of

mute = on_command("mute", aliases={"闭嘴"}, **COMMAND)


@mute.handle()
async def _mute(bot: Bot, event: Event, args: Annotated[Message[Any], CommandArg()]) -> None:
    async def action() -> str:
        await require_admin(bot, event)
        return await runtime.core().chat_commands.mute(scope_of(event), args.extract_plain_text())

    await answer(mute, action)
