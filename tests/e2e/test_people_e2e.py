"""Issue 43 end to end: two members of one group ask the persona "我…" about the same
kind of fact through a real OneBot peer; each one's prompt carries their own memory,
and the other member's is absent or only `related` (never stated as fact)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

from .harness import OnebotPeer, running_bot, wait_until
from .test_chat_e2e import ENV, is_send

__all__ = ["openai_server"]

pytestmark = pytest.mark.e2e

GROUP = 7101
MEMBERS = {20001: "阿哲", 20002: "小周"}
BIRTHDAYS = {20001: "阿哲的生日是3月14号", 20002: "小周的生日是5月20号"}
OTHERS = ("老王养了两只猫", "群里周五晚上开黑", "小周在深圳做前端")


def answers(body: dict[str, Any]) -> Reply:
    del body
    return Reply.text("记得呀")


def bands(prompt: str) -> dict[str, str]:
    """Each injected memory's text -> its band as the prompt says it (确定 / 相关), in
    prompt order."""
    out: dict[str, str] = {}
    for found in re.finditer(r"^#\d+〔(确定|相关)[｜〕][^\n]*?〕([^（\n]+)", prompt, re.M):
        out[found.group(2).strip()] = found.group(1)
    return out


async def test_each_member_asking_about_themselves_gets_their_own_memory(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    openai_server.handler = answers
    env = {**ENV, **openai_server.env()}
    async with running_bot(tmp_path, env=env) as bot, bot.peer() as peer:
        group = Group(peer)
        for user_id, fact in BIRTHDAYS.items():
            await group.say(f"/remember {fact}", user_id, role="admin")
        for fact in OTHERS:
            await group.say(f"/remember {fact}", 20001, role="admin")
        for user_id in MEMBERS:
            before = len(openai_server.requests)
            await group.say("我生日几号来着", user_id, at_bot=True)
            # The reply's prompt (a consolidation batch may be asked for meanwhile).
            replies = [r for r in openai_server.requests[before:] if not r.body.get("tools")]
            injected = bands(replies[0].prompt_text)
            mine = BIRTHDAYS[user_id]
            theirs = next(f for u, f in BIRTHDAYS.items() if u != user_id)
            assert list(injected)[:1] == [mine], (MEMBERS[user_id], injected)
            assert injected[mine] == "确定"  # the persona may state it
            # The other member's birthday: absent, or only possibly about someone else.
            assert injected.get(theirs, "相关") == "相关", (MEMBERS[user_id], injected)


class Group:
    """Members of one group talking to the bot, each under their own nickname."""

    def __init__(self, peer: OnebotPeer) -> None:
        self.peer = peer
        self.next_id = 50_000

    async def say(self, text: str, user_id: int, *, role: str = "member", at_bot: bool = False):
        """Send as `user_id` and wait for the bot's answer in the group."""
        self.next_id += 1
        start = len(self.peer.calls)
        message = self.peer.group_message(
            text,
            group_id=GROUP,
            message_id=self.next_id,
            user_id=user_id,
            nickname=MEMBERS[user_id],
            role=role,
            at_bot=at_bot,
        )
        await self.peer.send_event(message)
        return await wait_until(lambda: [c for c in self.peer.calls[start:] if is_send(c, GROUP)])
