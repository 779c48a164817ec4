"""Issue 45 end to end, through a real OneBot peer and a fake model that consolidates
by tool calls: 阿哲 says "我下个月搬去成都" in group A; in his private chat "我搬家是哪天
来着" finds it, labelled as said elsewhere and never sure; in group B nothing until he
sends `/carry groups on`, then it comes, also when 老王 @s him there (and not when 老王
asks without the @ or his name); after an admin's `/carry block` in B, nothing; a
secret he said in the private chat never appears in A or B; 小周's hearsay about him
never travels; after `/carry private off` his private chat no longer gets it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

from .harness import ApiCall, OnebotPeer, query, running_bot, wait_until
from .test_chat_e2e import ENV, is_send, text_of

__all__ = ["openai_server"]

pytestmark = pytest.mark.e2e

A, B = 7201, 7202
ZHE, ZHOU, WANG = 20001, 20002, 20003
NAMES = {ZHE: "阿哲", ZHOU: "小周", WANG: "老王"}
MOVED = "我下个月搬去成都"
GOSSIP = "听说阿哲要去考公务员了"
SECRET = "跟你说，我搬家其实是为了离女朋友近一点"
# What the model makes of each line: (scope kind, who said it, memory content).
MEMORIES = {
    MOVED: "阿哲下个月搬家，搬去成都",
    GOSSIP: "阿哲要去考公务员",
    SECRET: "阿哲搬家是为了离女朋友近一点",
}
ASKED = "我搬家是哪天来着"
CARRIED = "〔仅供参考｜在别的群说过〕"


def consolidating_model(body: dict[str, Any]) -> Reply:
    """Each line above becomes a memory about 阿哲 (by the id the batch's people list
    gives), citing that line alone; every reply gets a plain answer."""
    messages = body.get("messages", [])
    if not body.get("tools"):
        return Reply.text("嗯嗯")
    user = str(messages[1].get("content") or "")
    token = re.search(r"token：(\S+)", user)
    if token is None or any(m.get("role") == "tool" for m in messages):
        return Reply.text("整理完了")
    calls: list[tuple[str, dict[str, Any]]] = []
    listed = re.search(rf"^- ({ZHE})：", user, re.M)
    about: dict[str, Any] = {"subject": "阿哲"}
    if listed is not None:
        about["subject_id"] = listed.group(1)
    for line, content in MEMORIES.items():
        said = re.search(rf"^#(\d+) \[[^\]]*\] [^\n]*：{re.escape(line)}$", user, re.M)
        if said is not None:
            calls.append(
                (
                    "write_memory",
                    {
                        "token": token.group(1),
                        "type": "event",
                        **about,
                        "content": content,
                        "evidence": [int(said.group(1))],
                    },
                )
            )
    outcome = "extracted" if calls else "nothing"
    calls.append(("acknowledge", {"token": token.group(1), "outcome": outcome, "summary": "聊天"}))
    return Reply.tools(*calls)


def is_private_send(call: ApiCall, user_id: int) -> bool:
    return call.action in ("send_private_msg", "send_msg") and call.params.get("user_id") == user_id


class Chats:
    """阿哲, 小周 and 老王 talking to the bot in two groups and 阿哲's private chat."""

    def __init__(self, peer: OnebotPeer, server: FakeOpenAIServer) -> None:
        self.peer = peer
        self.server = server
        self.next_id = 60_000

    async def post(
        self, group: int, user_id: int, text: str | list[dict[str, Any]], **kw: Any
    ) -> None:
        self.next_id += 1
        await self.peer.send_event(
            self.peer.group_message(
                text,
                group_id=group,
                message_id=self.next_id,
                user_id=user_id,
                nickname=NAMES[user_id],
                **kw,
            )
        )

    async def say(
        self, group: int, user_id: int, text: str | list[dict[str, Any]], **kw: Any
    ) -> str:
        """Send in a group and wait for the bot's answer there; its text."""
        start = len(self.peer.calls)
        await self.post(group, user_id, text, **kw)
        sent = await wait_until(lambda: [c for c in self.peer.calls[start:] if is_send(c, group)])
        return text_of(sent[0])

    async def whisper(self, text: str) -> str:
        """阿哲 in his private chat; the bot's answer."""
        start = len(self.peer.calls)
        self.next_id += 1
        await self.peer.send_event(
            self.peer.private_message(
                text, user_id=ZHE, message_id=self.next_id, nickname=NAMES[ZHE]
            )
        )
        sent = await wait_until(
            lambda: [c for c in self.peer.calls[start:] if is_private_send(c, ZHE)]
        )
        return text_of(sent[0])

    async def prompt(self, ask: Any) -> str:
        """The reply prompt of the wake `ask()` sends (not a consolidation batch)."""
        before = len(self.server.requests)
        await ask()
        replies = [r for r in self.server.requests[before:] if not r.body.get("tools")]
        return replies[0].prompt_text


async def test_his_own_words_follow_him_only_where_and_when_he_chose(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    openai_server.handler = consolidating_model
    env = {
        **ENV,
        **openai_server.env(),
        "YUJI_CONSOLIDATION_TICK_S": "1",
        "YUJI_ELIGIBLE_MAX_WAIT_S": "1",
    }
    async with running_bot(tmp_path, env=env) as bot, bot.peer() as peer:
        chats = Chats(peer, openai_server)
        await chats.post(A, ZHE, MOVED)
        await chats.post(A, ZHOU, GOSSIP)
        await chats.post(B, ZHE, "大家好，我是阿哲")
        await chats.post(B, WANG, "欢迎欢迎")
        await chats.whisper(SECRET)
        rows = await wait_until(
            lambda: (
                found
                if len(
                    found := query(
                        bot.database,
                        "SELECT content, scope, subject_person, word FROM memories",
                    )
                )
                == 3
                else None
            ),
            timeout_s=90,
        )
        held = {content: (scope, person, word) for content, scope, person, word in rows}
        assert held == {
            MEMORIES[MOVED]: (f"group:{A}", str(ZHE), "self-only"),
            MEMORIES[GOSSIP]: (f"group:{A}", str(ZHE), "hearsay"),
            MEMORIES[SECRET]: (f"private:{ZHE}", str(ZHE), "self-only"),
        }

        # His private chat: carried by default, labelled, never sure, naming no group.
        prompt = await chats.prompt(lambda: chats.whisper(ASKED))
        assert f"{CARRIED}{MEMORIES[MOVED]}" in prompt, prompt
        assert "〔确定｜在别的群说过〕" not in prompt
        assert str(A) not in prompt
        assert MEMORIES[GOSSIP] not in prompt  # hearsay never travels

        # Group B: nothing until he turns groups on.
        ask_b = lambda: chats.say(B, ZHE, ASKED, at_bot=True)  # noqa: E731
        prompt = await chats.prompt(ask_b)
        assert MEMORIES[MOVED] not in prompt
        answer = await chats.say(B, ZHE, "/carry groups on")
        assert "别的群" in answer
        prompt = await chats.prompt(ask_b)
        assert f"{CARRIED}{MEMORIES[MOVED]}" in prompt, prompt
        assert MEMORIES[SECRET] not in prompt  # a private chat's words never leave it
        assert MEMORIES[GOSSIP] not in prompt

        # 老王 @s him (an @ showing only his id): the wake names him, his words come;
        # without the @ and without his name it is about no one, and nothing comes.
        at_zhe = [
            {"type": "at", "data": {"qq": str(ZHE)}},
            {"type": "text", "data": {"text": " 他下个月搬去哪"}},
        ]
        prompt = await chats.prompt(lambda: chats.say(B, WANG, at_zhe, at_bot=True))
        assert f"{CARRIED}{MEMORIES[MOVED]}" in prompt, prompt
        prompt = await chats.prompt(lambda: chats.say(B, WANG, "他下个月搬去哪", at_bot=True))
        assert MEMORIES[MOVED] not in prompt

        # An admin of B refuses anything carried: nothing, at the next wake.
        answer = await chats.say(B, WANG, "/carry block", role="admin")
        assert "不再带入" in answer
        prompt = await chats.prompt(ask_b)
        assert MEMORIES[MOVED] not in prompt

        # Group A never gets the private chat's secret either.
        prompt = await chats.prompt(lambda: chats.say(A, ZHE, "我搬家是为了什么来着", at_bot=True))
        assert MEMORIES[SECRET] not in prompt

        # He turns his private chat off: the next wake there has none of it.
        assert "下一句起生效" in await chats.whisper("/carry private off")
        prompt = await chats.prompt(lambda: chats.whisper(ASKED))
        assert MEMORIES[MOVED] not in prompt
        assert MEMORIES[SECRET] in prompt  # his private chat's own memory stays
