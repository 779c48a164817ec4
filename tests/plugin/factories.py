"""OneBot v11 events for nonebug tests, shaped like NapCat's (message format `array`).

event = group_message("hello", message_id=1, group_id=100, user_id=200)
async with app.test_matcher() as ctx:
    bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
    ctx.receive_event(bot, event)

`memory_in(core, scope, content)` seeds one memory resting on an archived message.
"""

from __future__ import annotations

import itertools
from typing import Any

from nonebot.adapters.onebot.v11 import GroupMessageEvent, Message, PrivateMessageEvent

from memory_core import NewExperience, Yuji
from memory_core.types import EvidenceRef

BOT_ID = "1234567"
TIME = 1_795_000_000  # 2026-11-18 (UTC)

_ids = itertools.count(1_000_000)


def _message(message: str | Message | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(message, str):
        return [{"type": "text", "data": {"text": message}}]
    if isinstance(message, Message):
        return [{"type": s.type, "data": dict(s.data)} for s in message]
    return message


def group_message(
    message: str | Message | list[dict[str, Any]],
    *,
    message_id: int | None = None,
    group_id: int = 100,
    user_id: int = 200,
    card: str = "",
    nickname: str = "群友",
    role: str = "member",
    time: int = TIME,
    to_me: bool = False,
    self_id: str = BOT_ID,
) -> GroupMessageEvent:
    segments = _message(message)
    return GroupMessageEvent.model_validate(
        {
            "time": time,
            "self_id": int(self_id),
            "post_type": "message",
            "message_type": "group",
            "sub_type": "normal",
            "message_id": next(_ids) if message_id is None else message_id,
            "group_id": group_id,
            "user_id": user_id,
            "message": segments,
            "raw_message": "",
            "font": 0,
            "sender": {"user_id": user_id, "nickname": nickname, "card": card, "role": role},
            "to_me": to_me,
        }
    )


def private_message(
    message: str | Message | list[dict[str, Any]],
    *,
    message_id: int | None = None,
    user_id: int = 200,
    nickname: str = "群友",
    time: int = TIME,
    self_id: str = BOT_ID,
) -> PrivateMessageEvent:
    return PrivateMessageEvent.model_validate(
        {
            "time": time,
            "self_id": int(self_id),
            "post_type": "message",
            "message_type": "private",
            "sub_type": "friend",
            "message_id": next(_ids) if message_id is None else message_id,
            "user_id": user_id,
            "message": _message(message),
            "raw_message": "",
            "font": 0,
            "sender": {"user_id": user_id, "nickname": nickname},
            "to_me": True,
        }
    )


async def memory_in(core: Yuji, scope: str, content: str) -> int:
    """A fact memory of `scope`, with an archived message as its evidence; its id."""
    exp = await core.archive.append(
        NewExperience(
            scope=scope,
            fingerprint=f"seed-{content}",
            sender_id="7",
            text=content,
            sent_at=core.clock.now(),
        )
    )
    out = await core.memories.write(
        scope,
        type="fact",
        subject="阿明",
        content=content,
        evidence=[EvidenceRef(experience_id=exp)],
    )
    return out.memory.id
