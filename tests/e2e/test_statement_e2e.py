"""A statement that mentions a remembered thing brings the memory up (issue 34).

The real bot with its shipped weights, a OneBot peer and the loopback model recording
every prompt: after /remember, "我今天又去琴行了" (no question) reaches the model with
the guitar lessons in its recalled block; laughter right after it leans on it and
brings them up too; a greeting reaches it with none; and the
same statement after two turns about the lessons (the wake's context) finds them too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

from .harness import running_bot
from .test_chat_e2e import ENV, MEMORY_LINE, Chat, reply_prompt, text_of

__all__ = ["openai_server"]

pytestmark = pytest.mark.e2e

HEADING = "## 想起的记忆"


def recalled_lines(prompt: str) -> list[str]:
    return [line for line in prompt.splitlines() if MEMORY_LINE.match(line)]


async def test_a_statement_brings_up_what_it_mentions(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    openai_server.handler = lambda body: Reply.text("嗯嗯")
    env = {**ENV, **openai_server.env()}
    async with running_bot(tmp_path, env=env) as bot, bot.peer() as peer:
        chat = Chat(peer)
        for fact in (
            "阿明每周六下午去琴行学吉他，老师姓孙",
            "阿明养了一只橘猫叫团子",
            "阿明下个月要去成都出差",
        ):
            answer = await chat.ask(f"/remember {fact}", role="admin")
            assert "记住了" in text_of(answer)

        async def prompt_of(wake: str) -> str:
            before = len(openai_server.requests)
            await chat.ask(wake, at_bot=True)
            return reply_prompt(openai_server, before)

        statement = await prompt_of("我今天又去琴行了")
        reaction = await prompt_of("哈哈哈哈哈")
        phatic = await prompt_of("早上好呀")
        await chat.say("孙老师今天教了扫弦")
        await chat.say("左手按弦按得好疼")
        in_context = await prompt_of("我今天又去琴行了")

    assert HEADING in statement
    assert any("吉他" in line for line in recalled_lines(statement))
    # Laughter right after it reacts to it, and leans on it; a greeting never leans.
    assert any("吉他" in line for line in recalled_lines(reaction))
    assert HEADING not in phatic
    assert not recalled_lines(phatic)
    assert any("吉他" in line for line in recalled_lines(in_context))
