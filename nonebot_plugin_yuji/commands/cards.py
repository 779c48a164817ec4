"""`/cards` (anyone): the seven memory cards of this chat."""

from __future__ import annotations

from nonebot import on_command
from nonebot.adapters import Event

from ._common import COMMAND, answer, runtime, scope_of

cards = on_command("cards", aliases={"卡片"}, **COMMAND)


@cards.handle()
async def _cards(event: Event) -> None:
    async def action() -> str:
        return await runtime.core().chat_commands.cards(scope_of(event))

    await answer(cards, action)
