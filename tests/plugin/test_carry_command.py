"""`/carry` under nonebug: a member's own choices (private on, groups off by default),
what would travel listed only in their private chat, a group admin's block, and the
answers to misuse."""

from __future__ import annotations

from typing import Any

from nonebot.adapters.onebot.v11 import Bot, MessageSegment
from nonebug import App

from memory_core import EvidenceRef, NewExperience, Yuji
from memory_core.chat.carry_commands import USAGE
from memory_core.chat.texts import ADMIN_ONLY, GROUP_ONLY

from .factories import BOT_ID, group_message, private_message

A, B = "group:100", "group:101"


async def run(app: App, event: Any, answer: str) -> None:
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, MessageSegment.text(answer), result={"message_id": 1})
        ctx.should_finished()


async def moved(core: Yuji) -> None:
    """Member 200 (小明) said in group A that he moves to Chengdu, and spoke in B."""
    said = await core.archive.append(
        NewExperience(
            A, "a1", "200", "我下个月搬去成都", sent_at=core.clock.now(), sender_name="小明"
        )
    )
    await core.archive.append(
        NewExperience(B, "b1", "200", "大家好", sent_at=core.clock.now(), sender_name="小明")
    )
    await core.memories.write(
        A,
        type="event",
        subject="小明",
        content="小明下个月搬去成都",
        evidence=[EvidenceRef(experience_id=said)],
    )


DEFAULTS = "带到你和我的私聊：开（默认开）；带到你在的别的群：关（默认关）"
HEAD = "带话：你本人在群里讲的自己的事，能跟着你去你别的聊天；旁人转述的、私聊中讲的一律不带。"


async def test_carry_in_private_lists_what_would_travel(app: App, yuji_core: Yuji) -> None:
    await moved(yuji_core)
    await run(
        app,
        private_message("/carry", user_id=200, nickname="小明"),
        "\n".join([HEAD, DEFAULTS, "现在会带到：私聊；共 1 条：", "· 小明下个月搬去成都"]),
    )


async def test_carry_in_a_group_tells_the_count_never_the_words(app: App, yuji_core: Yuji) -> None:
    await moved(yuji_core)
    await run(
        app,
        group_message("/carry groups on", group_id=101, user_id=200, card="小明"),
        "好，你在的别的群里我也会记得你在群里说过的自己的事（管理员拒绝带入的群除外）。\n"
        "带到你和我的私聊：开（默认开）；带到你在的别的群：开（默认关）",
    )
    answer = "\n".join(
        [
            HEAD,
            "带到你和我的私聊：开（默认开）；带到你在的别的群：开（默认关）",
            "本群：允许带入",
            "现在会带到：2 个群；共 1 条：",
            "（内容只在私聊里列出：发 /carry 给我私聊看）",
        ]
    )
    await run(app, group_message("/carry", group_id=101, user_id=200, card="小明"), answer)
    choice = await yuji_core.carrying.repo.choice("qq", "200")
    assert (choice.into_private, choice.into_groups) == (True, True)


async def test_private_off_takes_its_effect_at_once(app: App, yuji_core: Yuji) -> None:
    await moved(yuji_core)
    await run(
        app,
        private_message("/carry private off", user_id=200, nickname="小明"),
        "好，私聊里不再带上你在群里说的话了，下一句起生效。\n"
        "带到你和我的私聊：关（默认开）；带到你在的别的群：关（默认关）",
    )
    await run(
        app,
        private_message("/carry", user_id=200, nickname="小明"),
        "\n".join(
            [
                HEAD,
                "带到你和我的私聊：关（默认开）；带到你在的别的群：关（默认关）",
                "现在没有会带过去的话。",
            ]
        ),
    )


async def test_only_a_group_admin_blocks_and_only_in_a_group(app: App, yuji_core: Yuji) -> None:
    await run(app, group_message("/carry block", group_id=101, role="member"), ADMIN_ONLY)
    assert not await yuji_core.carrying.blocked(B)
    await run(app, private_message("/carry block", user_id=200), GROUP_ONLY)
    await run(
        app,
        group_message("/carry block", group_id=101, role="admin"),
        "好，本群不再带入任何人在别的群说的话。",
    )
    assert await yuji_core.carrying.blocked(B)
    await run(
        app,
        group_message("/carry unblock", group_id=101, role="owner"),
        "好，本群又允许带入了（只带本人选择带过来的、本人亲口说的话）。",
    )
    assert not await yuji_core.carrying.blocked(B)


async def test_anything_else_is_the_usage(app: App, yuji_core: Yuji) -> None:
    for wrong in ("/carry groups maybe", "/carry everything on", "/carry block now"):
        await run(app, group_message(wrong), USAGE)
