"""`/why` (anyone): what was injected into the bot's last reply here.

Quoting one of the bot's messages with `/why` asks about that reply instead.
"""

from __future__ import annotations

from nonebot import on_command
from nonebot.adapters.onebot.v11 import MessageEvent

from ._common import COMMAND, answer, convert, runtime, scope_of

why = on_command("why", aliases={"为什么"}, **COMMAND)


@why.handle()
async def _why(event: MessageEvent) -> None:
    async def action() -> str:
        quoted = convert(event.original_message).reply_to
        return await runtime.core().chat_commands.why(scope_of(event), quoted)

    await answer(why, action)
