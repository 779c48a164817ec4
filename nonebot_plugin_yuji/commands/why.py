"""`/why` (anyone): what was injected into the bot's last reply here.

Quoting one of the bot's messages with `/why` asks about that reply instead.
"""

from __future__ import annotations

from nonebot import on_command
from nonebot.adapters import Event

from ._common import COMMAND, answer, quoted_id, runtime, scope_of

why = on_command("why", aliases={"为什么"}, **COMMAND)


@why.handle()
async def _why(event: Event) -> None:
    async def action() -> str:
        quoted = quoted_id(event)
        return await runtime.core().chat_commands.why(scope_of(event), quoted)

    await answer(why, action)
