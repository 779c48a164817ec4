"""`/recall <question>` (anyone): what recall would inject for it, with stage tags; a
first person in it is whoever asks, and a member it @s is named."""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from memory_core import Asker

from ._common import experience_of, mentioned_ids, runtime, scope_of, slash


@slash("recall")
async def recall(bot: Bot, event: Event, text: str) -> str:
    core = runtime.core()
    said = experience_of(bot, event, now=core.clock.now())
    asker = Asker(said.sender_id, (said.sender_name,)) if said is not None else None
    return await core.chat_commands.recall_preview(
        scope_of(event), text, asker, mentioned_ids(bot, event)
    )
