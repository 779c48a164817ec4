"""`/recall <question>` (anyone): what recall would inject for it, with stage tags."""

from __future__ import annotations

from typing import Annotated, Any

from nonebot import on_command
from nonebot.adapters import Event, Message
from nonebot.params import CommandArg

from ._common import COMMAND, answer, runtime, scope_of

recall = on_command("recall", **COMMAND)


@recall.handle()
async def _recall(event: Event, args: Annotated[Message[Any], CommandArg()]) -> None:
    async def action() -> str:
        return await runtime.core().chat_commands.recall_preview(
            scope_of(event), args.extract_plain_text()
        )

    await answer(recall, action)
