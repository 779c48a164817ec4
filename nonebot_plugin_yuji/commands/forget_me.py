"""`/forget-me` (anyone, about themselves): forget the sender in this chat, confirmed
by sending it twice within a minute."""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from ._common import runtime, scope_of, slash


@slash("forget-me", "忘记我")
async def forget_me(_bot: Bot, event: Event, _text: str) -> str:
    return await runtime.core().porting.forget_me(scope_of(event), event.get_user_id())
