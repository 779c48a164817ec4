"""`/remember <text>` (admin): a memory now, resting on this very command message."""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from ._common import experience_of, require_admin, runtime, scope_of, slash


@slash("remember", "记住")
async def remember(bot: Bot, event: Event, text: str) -> str:
    await require_admin(bot, event)
    core = runtime.core()
    command = experience_of(bot, event, now=core.clock.now())
    if command is None:
        return "这里用不了这个命令。"
    done = await core.chat_commands.remember(
        scope_of(event), text, command=command, by=event.get_user_id()
    )
    return done.text
