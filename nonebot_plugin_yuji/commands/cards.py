"""`/cards` (anyone): the seven memory cards of this chat; `/cards @某人` (or a name,
or 我) in a group: that member's card there (one's own, or anyone's for an admin)."""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from ._common import is_admin, mentioned_ids, runtime, scope_of, slash


@slash("cards", "卡片")
async def cards(bot: Bot, event: Event, text: str) -> str:
    return await runtime.core().chat_commands.cards(
        scope_of(event),
        text,
        asker=event.get_user_id(),
        mentioned=mentioned_ids(bot, event),
        is_admin=lambda: is_admin(bot, event),
    )
