"""`/recall <question>` (anyone): what recall would inject for it, with stage tags."""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from ._common import runtime, scope_of, slash


@slash("recall")
async def recall(_bot: Bot, event: Event, text: str) -> str:
    return await runtime.core().chat_commands.recall_preview(scope_of(event), text)
