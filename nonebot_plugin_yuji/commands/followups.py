"""`/followups` (anyone lists and may `mute-me`; an admin `on|off` and `drop N`): the
dated plans the persona may ask about in this chat (docs/chat-commands.md)."""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from ._common import is_admin, runtime, scope_of, slash


@slash("followups", "跟进")
async def followups(bot: Bot, event: Event, text: str) -> str:
    return await runtime.core().followups.command(
        scope_of(event),
        text,
        asker=event.get_user_id(),
        is_admin=lambda: is_admin(bot, event),
    )
