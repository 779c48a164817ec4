"""`/why` (anyone): what was injected into the bot's last reply here.

Quoting one of the bot's messages with `/why` asks about that reply instead.
"""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from ._common import quoted_id, runtime, scope_of, slash


@slash("why", "为什么")
async def why(_bot: Bot, event: Event, _text: str) -> str:
    return await runtime.core().chat_commands.why(scope_of(event), quoted_id(event))
