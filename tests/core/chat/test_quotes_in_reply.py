"""A reply is given recent chat not consolidated yet as quotes (recall/quotes.py):
in its own labelled block, recorded for /why with the message ids, and no more once
the batch holding the message is acknowledged."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

from memory_core import Yuji
from memory_core.chat.service import ChatService, Incoming
from memory_core.chat.sources import ChatContextSource
from memory_core.llm.fake import ScriptedLLM, text_response
from memory_core.prompts.chat import QUOTES_HEADING
from memory_core.storage.chat.chat_repo import ChatRepo
from memory_core.types import NewExperience
from tests.core.recall.test_quotes import acknowledge

G1 = "group:1"
BOT = "10000"
SAID = "下周三我要去杭州面试一家做机器人的公司"


async def said(core: Yuji, n: int, text: str, ago: timedelta, sender: str = "30001") -> int:
    return await core.archive.append(
        NewExperience(
            scope=G1,
            fingerprint=f"h{n}",
            sender_id=sender,
            sender_name="阿明" if sender == "30001" else "路人",
            text=text,
            sent_at=core.clock.now() - ago,
        )
    )


async def test_an_old_unconsolidated_message_is_quoted_then_not_once_acknowledged(
    core: Yuji,
) -> None:
    target = await said(core, 0, SAID, timedelta(hours=2))
    for i in range(600):
        await said(core, i + 1, f"路人闲聊第{i}句", timedelta(minutes=100 - i / 10), "30009")
    await core.archive.flush()
    llm = ScriptedLLM([text_response("是阿明哦"), text_response("不记得了")])
    service = ChatService(
        settings=core.live,
        clock=core.clock,
        repo=ChatRepo(core.db),
        archive=core.archive,
        recall=core.recall,
        memories=core.memories,
        context=ChatContextSource(core.memory_repo, core.consolidation),
        llm=llm,
    )

    async def ask(fp: str) -> str:
        message = Incoming(
            scope=G1,
            fingerprint=fp,
            sender_id="30002",
            sender_name="小红",
            text="大肥鱼，谁要去杭州面试来着",
            sent_at=core.clock.now(),
            self_id=BOT,
            is_private=False,
            mentioned_ids=(BOT,),
        )
        await core.archive.append(
            NewExperience(
                scope=G1,
                fingerprint=fp,
                sender_id="30002",
                sender_name="小红",
                text=message.text,
                sent_at=message.sent_at,
            )
        )
        await core.archive.flush()

        async def send(_: str) -> str:
            return f"bot-{fp}"

        out = await service.respond(message, send)
        assert out.kind == "reply"
        return llm.requests[-1].messages[0].content or ""

    system = await ask("q1")
    local = (core.clock.now() - timedelta(hours=2)).astimezone(ZoneInfo(core.settings.timezone))
    assert f"## {QUOTES_HEADING}\n〔原话 消息#{target}〕[{local:%H:%M}] 阿明：{SAID}" in system
    why = await core.chat_commands.why(G1)
    assert f"消息#{target}〔原话" in why
    assert f"阿明：{SAID}" in why
    (turn,) = await core.console.turns(G1, limit=1)  # the console's "this turn"
    assert [q.message_id for q in turn.injection.quotes] == [target]
    assert turn.messages[target].text == SAID

    await acknowledge(core, G1, target)
    system = await ask("q2")
    assert QUOTES_HEADING not in system
    assert SAID not in system
