"""`/forget-me` (anyone, about themselves): forget the sender in this chat, confirmed
by sending it twice within a minute."""

from __future__ import annotations

from nonebot import on_command
from nonebot.adapters import Event

from ._common import COMMAND, answer, runtime, scope_of

forget_me = on_command("forget-me", aliases={"忘记我"}, **COMMAND)


@forget_me.handle()
async def _forget_me(event: Event) -> None:
    async def action() -> str:
        return await runtime.core().porting.forget_me(scope_of(event), event.get_user_id())

    await answer(forget_me, action)
