"""Recent chat is recallable before its batch, end to end: the real bot, a OneBot
peer playing NapCat, and the fake OpenAI server recording every prompt.

A message said two hours ago, 600 messages back and not consolidated yet, is quoted
when asked about (its own labelled block, with its sender and time); once the batch
holding it is acknowledged it is not; a message of someone who sent /forget-me is
never quoted again.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memory_core import Settings
from memory_core.prompts.chat import QUOTES_HEADING
from memory_core.storage.consolidation.consolidation_repo import ConsolidationRepo, Cut
from memory_core.storage.engine import Database
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

from .harness import count_rows, query, running_bot, wait_until
from .test_chat_e2e import ENV, Chat, reply_prompt, text_of

__all__ = ["openai_server"]

pytestmark = pytest.mark.e2e

GROUP = 7101
SCOPE = f"group:{GROUP}"
ASKER, TALKER, OTHER, CROWD = 20001, 20002, 20003, 20009
INTERVIEW = "下周三我要去杭州面试一家做机器人的公司"
MOVING = "我月底要搬去苏州住了"


async def acknowledge_through(database: Path, last_id: int) -> None:
    """What consolidation does when the model acknowledges a batch ending at `last_id`
    (the batch state machine itself; the bot keeps running meanwhile)."""
    db = Database(Settings(data_dir=database.parent).sqlalchemy_url)
    try:
        repo = ConsolidationRepo(db)
        first = (await repo.cursor(SCOPE)).acked_id + 1
        now = datetime.now(UTC)
        cut = Cut(first, last_id, last_id - first + 1, 100)
        batch = await repo.create(SCOPE, cut, "e2e", now)
        assert batch is not None
        await repo.delivered(batch.id, now)
        await repo.acknowledge(batch.id, "e2e", "nothing", "", now)
    finally:
        await db.dispose()


async def test_recent_chat_is_quoted_until_acknowledged_and_never_after_forget_me(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    openai_server.handler = lambda _body: Reply.text("咕噜，记得")
    env = {
        **ENV,
        "YUJI_VECTOR_MODE": "off",
        # No chat is ever eligible: the leader's scheduler starts at once, and a batch of
        # its own would race the acknowledgement this test makes by hand.
        "YUJI_ELIGIBLE_MIN_PENDING": "1000000",
        "YUJI_ELIGIBLE_MAX_WAIT_S": "86400",
        **openai_server.env(),
    }
    async with running_bot(tmp_path, env=env) as bot, bot.peer() as peer:
        chat = Chat(peer, GROUP)
        two_hours_ago = int(time.time()) - 7200

        async def said(text: str, user_id: int, nickname: str, at: int) -> int:
            chat.next_id += 1
            await peer.send_event(
                peer.group_message(
                    text,
                    group_id=GROUP,
                    message_id=chat.next_id,
                    user_id=user_id,
                    nickname=nickname,
                    time_=at,
                )
            )
            return chat.next_id

        await said(INTERVIEW, TALKER, "阿明", two_hours_ago)
        await said(MOVING, OTHER, "小红", two_hours_ago + 1)
        for i in range(600):
            await said(f"路人闲聊第{i}句今天吃什么", CROWD, "路人", two_hours_ago + 10 + i * 10)
        await wait_until(lambda: count_rows(bot.data_dir, "experiences") == 602, timeout_s=60)
        (interview_id,) = query(
            bot.database, "SELECT id FROM experiences WHERE text = ?", (INTERVIEW,)
        )[0]
        local = datetime.fromtimestamp(two_hours_ago, ZoneInfo("Asia/Shanghai"))

        # Asked about it: quoted in its own block, labelled, with sender and time.
        before = len(openai_server.requests)
        answer = await chat.ask("大肥鱼，谁要去杭州面试来着", at_bot=True, user_id=ASKER)
        assert text_of(answer) == "咕噜，记得"
        prompt = reply_prompt(openai_server, before)
        today = datetime.now(ZoneInfo("Asia/Shanghai")).date()
        stamp = f"{local:%H:%M}" if local.date() == today else f"{local:%m-%d %H:%M}"
        line = f"〔原话 消息#{interview_id}〕[{stamp}] 阿明：{INTERVIEW}"
        assert f"## {QUOTES_HEADING}\n{line}" in prompt
        why = text_of(await chat.ask("/why", user_id=ASKER))
        assert f"消息#{interview_id}〔原话" in why

        # Its batch acknowledged: the memory (or nothing) answers for it now.
        await acknowledge_through(bot.database, interview_id)
        before = len(openai_server.requests)
        await chat.ask("大肥鱼，谁要去杭州面试来着", at_bot=True, user_id=ASKER)
        prompt = reply_prompt(openai_server, before)
        assert QUOTES_HEADING not in prompt
        assert f"〔原话 消息#{interview_id}〕" not in prompt

        # Still unacknowledged, quoted; after its sender's /forget-me, never.
        before = len(openai_server.requests)
        await chat.ask("大肥鱼，谁月底要搬去苏州", at_bot=True, user_id=ASKER)
        assert MOVING in reply_prompt(openai_server, before)
        await chat.ask("/forget-me", user_id=OTHER)
        await chat.ask("/forget-me", user_id=OTHER)
        assert query(
            bot.database, "SELECT count(*) FROM experiences WHERE text = ?", (MOVING,)
        ) == [(0,)]
        before = len(openai_server.requests)
        await chat.ask("大肥鱼，谁月底要搬去苏州", at_bot=True, user_id=ASKER)
        prompt = reply_prompt(openai_server, before)
        assert MOVING not in prompt
        assert QUOTES_HEADING not in prompt
