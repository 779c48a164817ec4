"""`/forget-me` under nonebug: anyone, about themselves, confirmed by asking twice."""

from __future__ import annotations

from nonebot.adapters.onebot.v11 import Bot, MessageSegment
from nonebug import App

from memory_core import EvidenceRef, NewExperience, Yuji
from memory_core.porting.forget_me import ASK_AGAIN

from .factories import BOT_ID, group_message

SCOPE = "group:100"


async def _send(app: App, text: str, user_id: int, expect_start: str) -> None:
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        event = group_message(text, role="member", user_id=user_id)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, MessageSegment.text(expect_start), result={"message_id": 1})
        ctx.should_finished()


async def test_a_member_is_forgotten_after_asking_twice(app: App, yuji_core: Yuji) -> None:
    said = await yuji_core.archive.append(
        NewExperience(SCOPE, "m1", "321", "我养了一只猫", sent_at=yuji_core.clock.now())
    )
    memory = await yuji_core.memories.write(
        SCOPE,
        type="fact",
        subject="321",
        content="321 养了一只猫",
        evidence=[EvidenceRef(experience_id=said)],
    )
    await _send(app, "/forget-me", 321, ASK_AGAIN)
    assert (await yuji_core.memories.get(SCOPE, memory.memory.id)).status == "active"
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        event = group_message("/forget-me", role="member", user_id=321)
        ctx.receive_event(bot, event)
        done = "\n".join(
            [
                "好，我已经忘掉你了：",
                "· 撤回了 1 条关于你的记忆",
                "· 你的 3 条消息已替换为“已删除”",
                "· 删除了 0 个只属于你的图片文件",
                "只影响这个聊天，其他群不受影响。",
            ]
        )
        ctx.should_call_send(event, MessageSegment.text(done), result={"message_id": 2})
        ctx.should_finished()
    assert (await yuji_core.memories.get(SCOPE, memory.memory.id)).status == "retracted"
    archived = await yuji_core.archive.get(SCOPE, said)
    assert archived.text != "我养了一只猫"
