"""Describing an image for the memory (pure): the vision prompt, what its answer
becomes, and how descriptions take the place of `[图片]` in a message's text.

The vision model answers plain text; `clean_description` is its "response model":
one line, no brackets (it is shown inside `[图片：…]`), at most `MAX_CHARS`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory_core.llm.base import ChatMessage
from memory_core.llm.wire import strip_think

MAX_CHARS = 80
PLACEHOLDER = re.compile(r"\[(图片|动画表情|表情包)\]")
"""What the archive writes for an image, a sticker and a market sticker (mface)."""

SYSTEM = (
    "你帮一个 QQ 群聊机器人看图。用一句中文描述这张图（不超过 60 字）：画面里有什么、"
    "在做什么；图里有文字就照抄关键的文字；是表情包就说出它表达的情绪。只输出这一句描述。"
)


def describe_prompt(data_url: str) -> list[ChatMessage]:
    return [
        ChatMessage(role="system", content=SYSTEM),
        ChatMessage(role="user", content="描述这张图。", images=(data_url,)),
    ]


def clean_description(raw: str | None) -> str | None:
    """The description to keep, or None when the answer is unusable (empty)."""
    # The client already cut a reasoning model's thinking; any client may not have.
    text = " ".join(strip_think(raw or "").split()).strip("。 ")
    text = _unbracketed(text)
    if not text:
        return None
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


def with_descriptions(text: str, descriptions: Sequence[str | None]) -> str:
    """`text` with the n-th `[图片]` / `[动画表情]` / `[表情包]` read as `[图片：描述]` (the n-th
    image of the message, in segment order; None leaves that placeholder alone).
    Descriptions without a placeholder to fill are appended."""
    # Stored descriptions are cleaned already; a bracket here would still let one
    # close into a new placeholder that the next reader fills again.
    pending = [None if d is None else _unbracketed(d) for d in descriptions]

    def fill(match: re.Match[str]) -> str:
        if not pending:
            return match.group(0)
        description = pending.pop(0)
        return match.group(0) if description is None else f"[{match.group(1)}：{description}]"

    out = PLACEHOLDER.sub(fill, text)
    return out + "".join(f"[图片：{d}]" for d in pending if d is not None)


def _unbracketed(text: str) -> str:
    return text.replace("[", "【").replace("]", "】")
