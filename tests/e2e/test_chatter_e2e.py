"""A wake that asks about nothing gets no memories, through the whole chat path.

The real bot with its shipped relevance weights and chatter gate, a OneBot peer and
the loopback model recording every prompt: after /remember of memories that share
their words, "早上好呀" and "晚安啦" (a greeting never leans on the turns before it)
and "哈哈哈哈" after three turns of small talk (laughter leans on them, and they are
near nothing remembered) reach the model with no recalled block, while a question
about what was remembered (the control) reaches it with the memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.prompts.chat import QUOTES_HEADING
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

from .harness import running_bot
from .test_chat_e2e import ENV, MEMORY_LINE, Chat, reply_prompt, text_of

__all__ = ["openai_server"]

pytestmark = pytest.mark.e2e

HEADING = "## 想起的记忆"


async def test_a_chatter_wake_reaches_the_model_without_memories(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    openai_server.handler = lambda body: Reply.text("早呀")
    env = {**ENV, **openai_server.env()}
    async with running_bot(tmp_path, env=env) as bot, bot.peer() as peer:
        chat = Chat(peer)
        # Memories sharing the wakes' very words: only the gate keeps them out.
        for fact in (
            "阿明养了一只叫豆豆的柯基",
            "阿明每天早上好早就去跑步",
            "阿明笑起来总是哈哈哈哈的",
        ):
            answer = await chat.ask(f"/remember {fact}", role="admin")
            assert "记住了" in text_of(answer)

        async def prompt_of(wake: str) -> str:
            before = len(openai_server.requests)
            await chat.ask(wake, at_bot=True)
            return reply_prompt(openai_server, before)

        prompts = [await prompt_of("早上好呀"), await prompt_of("晚安啦")]
        # Laughter leans on the turns before it: after small talk it is small talk still.
        for turn in ("今天好冷啊", "风好大", "是啊，冻死了"):
            await chat.say(turn)
        prompts.append(await prompt_of("哈哈哈哈"))
        control = await prompt_of("阿明养的狗叫什么名字")

    for prompt in prompts:  # (the /remember lines are in the recent chat, not recalled)
        assert HEADING not in prompt
        assert f"## {QUOTES_HEADING}" not in prompt
        assert not MEMORY_LINE.findall(prompt)
    assert HEADING in control
    assert any("豆豆" in line for line in control.splitlines() if MEMORY_LINE.match(line))
