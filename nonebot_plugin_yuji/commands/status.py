"""`/status` (admin): pending messages, last batch, mute, last reply, and what the
nightly and operations areas report."""

from __future__ import annotations

from nonebot import on_command
from nonebot.adapters import Bot, Event

from ._common import COMMAND, answer, require_group_admin, runtime, scope_of

status = on_command("status", aliases={"状态"}, **COMMAND)


@status.handle()
async def _status(bot: Bot, event: Event) -> None:
    async def action() -> str:
        await require_group_admin(bot, event)
        return await runtime.core().chat_commands.status(scope_of(event))

    await answer(status, action)
