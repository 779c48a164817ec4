"""The wake handler under nonebug, with a scripted model: who gets an answer, what is
sent (plain text, first part quoting the trigger), and `/why` afterwards."""

from __future__ import annotations

from typing import Any

import pytest
from nonebot.adapters.onebot.v11 import Bot, Message, MessageSegment
from nonebug import App

from memory_core import FakeClock, FakeFetcher, Yuji
from memory_core.llm.fake import ScriptedLLM, text_response

from .factories import BOT_ID, group_message, memory_in, private_message

G = 100
SCOPE = f"group:{G}"


@pytest.fixture
def llm() -> ScriptedLLM:
    return ScriptedLLM()


@pytest.fixture
def yuji_open_kwargs(
    yuji_clock: FakeClock, yuji_fetcher: FakeFetcher, llm: ScriptedLLM
) -> dict[str, Any]:
    return {"clock": yuji_clock, "fetcher": yuji_fetcher, "llm": llm}


def at_bot(text: str) -> list[dict[str, Any]]:
    return [{"type": "at", "data": {"qq": BOT_ID}}, {"type": "text", "data": {"text": f" {text}"}}]


def reply_to(message_id: int, text: str) -> Message:
    return MessageSegment.reply(message_id) + MessageSegment.text(text)


async def test_at_bot_gets_a_quoted_plain_text_reply_without_markers(
    app: App, yuji_core: Yuji, llm: ScriptedLLM
) -> None:
    ids = [
        await memory_in(yuji_core, SCOPE, content)
        for content in ["阿明的撤离率是 20%", "小红喜欢吃火锅", "群里周五晚上开黑"]
    ]
    llm.push(text_response(f"20% 呀 [CQ:at,qq=all][[m:{ids[0]}]]"))
    event = group_message(at_bot("阿明的撤离率多少"), message_id=501)
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, event)
        ctx.should_call_send(
            event, reply_to(501, "20% 呀 [CQ:at,qq=all]"), result={"message_id": 9001}
        )
    assert (await yuji_core.memories.get(SCOPE, ids[0])).hit_count == 1
    system = llm.requests[0].messages[0].content or ""
    assert f"#{ids[0]}〔确定｜字面命中" in system
    injection = await yuji_core.chat_state.last_injection(SCOPE)
    assert injection is not None
    assert injection.reply_fingerprint == "9001"

    why = group_message("/why")
    expected = await yuji_core.chat_commands.why(SCOPE)
    assert f"#{ids[0]}〔字面命中" in expected
    assert "用上了" in expected
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, why)
        ctx.should_call_send(why, MessageSegment.text(expected), result={"message_id": 9002})


async def test_nickname_in_text_wakes_and_plain_chatter_does_not(
    app: App, yuji_core: Yuji, llm: ScriptedLLM
) -> None:
    llm.push(text_response("咕噜"))
    chatter = group_message("今天好冷")
    called = group_message("我觉得大肥鱼也怕冷", message_id=502)
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, chatter)
        ctx.receive_event(bot, called)
        ctx.should_call_send(called, reply_to(502, "咕噜"), result={"message_id": 9003})
    assert len(llm.requests) == 1


async def test_private_message_always_wakes_and_is_not_quoted(
    app: App, yuji_core: Yuji, llm: ScriptedLLM
) -> None:
    llm.push(text_response("在的"))
    event = private_message("在吗", user_id=321)
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, Message(MessageSegment.text("在的")), result={"message_id": 1})


async def test_muted_group_is_archived_but_not_answered(
    app: App, yuji_core: Yuji, llm: ScriptedLLM
) -> None:
    await yuji_core.chat_commands.mute(SCOPE)
    event = group_message(at_bot("在吗"), message_id=503)
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, event)
    assert llm.requests == []
    assert await yuji_core.archive.by_fingerprint(SCOPE, "503") is not None


async def test_refusal_twice_sends_the_fallback(
    app: App, yuji_core: Yuji, llm: ScriptedLLM
) -> None:
    llm.push(text_response("作为一个AI，我无法回答"), text_response("抱歉，我无法提供"))
    event = group_message(at_bot("你是谁"), message_id=504)
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, event)
        ctx.should_call_send(
            event, reply_to(504, yuji_core.settings.fallback_line), result={"message_id": 9004}
        )
    assert len(llm.requests) == 2


async def test_unknown_command_text_does_not_wake(
    app: App, yuji_core: Yuji, llm: ScriptedLLM
) -> None:
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, private_message("/frobnicate", user_id=321))
    assert llm.requests == []


def test_to_incoming_reads_mentions_quotes_and_skips_commands() -> None:
    from nonebot_plugin_yuji.chat import to_incoming

    event = group_message(
        [
            {"type": "reply", "data": {"id": "77"}},
            {"type": "text", "data": {"text": "问一下"}},
            {"type": "at", "data": {"qq": BOT_ID}},
            {"type": "at", "data": {"qq": "300", "name": "小明"}},
            {"type": "text", "data": {"text": " 在吗"}},
        ],
        message_id=601,
        card="阿明",
    )
    incoming = to_incoming(event, BOT_ID)
    assert incoming is not None
    assert (incoming.scope, incoming.fingerprint, incoming.sender_name) == (SCOPE, "601", "阿明")
    assert incoming.mentioned_ids == (BOT_ID, "300")
    assert incoming.members_mentioned == ("300",)  # the persona's own @ names no member
    assert incoming.text == "问一下@小明 在吗"
    assert (incoming.reply_to, incoming.reply_to_bot) == ("77", None)
    assert to_incoming(group_message("/mute 2h"), BOT_ID) is None
    assert to_incoming(group_message("hi", user_id=int(BOT_ID)), BOT_ID) is None
    private = to_incoming(private_message("hi", user_id=321), BOT_ID)
    assert private is not None
    assert (private.scope, private.is_private) == ("private:321", True)
