"""`/cards` (anyone): the seven memory cards of this chat."""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from ._common import runtime, scope_of, slash


@slash("cards", "卡片")
async def cards(_bot: Bot, event: Event, _text: str) -> str:
    return await runtime.core().chat_commands.cards(scope_of(event))
