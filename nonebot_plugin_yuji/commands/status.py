"""`/status` (admin): pending messages, last batch, mute, last reply, and what the
nightly and operations areas report."""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from ._common import require_group_admin, runtime, scope_of, slash


@slash("status", "状态")
async def status(bot: Bot, event: Event, _text: str) -> str:
    await require_group_admin(bot, event)
    return await runtime.core().chat_commands.status(scope_of(event))
