"""Issue 43 end to end: two members of one group ask the persona "我…" about the same
kind of fact through a real OneBot peer; each one's prompt carries their own memory,
and the other member's is absent or only `related` (never stated as fact). A hearsay
memory (one member telling about another, consolidated by the fake model through tool
calls) reaches its subject's prompt marked with whose word it is, `related` only, under
house rules that forbid stating it as fact; the asker's person card rides along."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memory_core import Settings
from memory_core.prompts.chat import PEOPLE_HEADING, house_rules
from memory_core.storage import PersonCardsRepo
from memory_core.storage.engine import Database
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

from .harness import OnebotPeer, count_rows, query, running_bot, wait_until
from .test_chat_e2e import ENV, is_send

__all__ = ["openai_server"]

pytestmark = pytest.mark.e2e

GROUP = 7101
SCOPE = f"group:{GROUP}"
MEMBERS = {20001: "阿哲", 20002: "小周"}
BIRTHDAYS = {20001: "阿哲的生日是3月14号", 20002: "小周的生日是5月20号"}
OTHERS = ("老王养了两只猫", "群里周五晚上开黑", "小周在深圳做前端")


def answers(body: dict[str, Any]) -> Reply:
    del body
    return Reply.text("记得呀")


MEMORY_LINE = re.compile(
    r"^#(\d+)〔(确定|仅供参考)｜[^〕\n]*〕(?:（([^）\n]*)）)?(.*?)(?:（[^）\n]*(?:起|为止)）)?$",
    re.M,
)
"""`#12〔确定｜字面命中：…〕（阿哲｜小周说）阿哲下个月搬去深圳（2026-12-07 起）`: id, band,
whose, content (its validity left off)."""


def bands(prompt: str) -> dict[str, str]:
    """Each injected memory's text -> its band as the prompt says it (确定 / 仅供参考),
    in prompt order."""
    return {m.group(4).strip(): m.group(2) for m in MEMORY_LINE.finditer(prompt)}


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
            assert injected.get(theirs, "仅供参考") == "仅供参考", (MEMBERS[user_id], injected)


ZHE, ZHOU = 20001, 20002
MOVE = "阿哲下个月搬去深圳"
HEARSAY = "阿哲下个月要搬去深圳了，上周他跟我说的"
CARD = "- （小周说）下个月搬去深圳\n- 喜欢打羽毛球"
ZHOU_CARD = "- 在深圳做前端"


def consolidating_model(body: dict[str, Any]) -> Reply:
    """Consolidation as a model would do it: 小周's line about 阿哲 becomes a memory
    about 阿哲 (the member by the id the batch's people list gives), citing 小周's
    message only. Every other request (the replies) gets a plain answer."""
    messages = body.get("messages", [])
    if not body.get("tools"):
        return Reply.text("好像听说过")
    user = str(messages[1].get("content") or "")
    token = re.search(r"token：(\S+)", user)
    if token is None or any(m.get("role") == "tool" for m in messages):
        return Reply.text("整理完了")  # the first turn already acknowledged
    said = re.search(rf"^#(\d+) \[[^\]]*\] 小周\({ZHOU}\)：{re.escape(HEARSAY)}$", user, re.M)
    if said is None:
        return Reply.tool("acknowledge", {"token": token.group(1), "outcome": "nothing"})
    listed = re.search(r"^- (\d+)：[^\n]*阿哲", user, re.M)
    about: dict[str, Any] = {"subject": "阿哲"}
    if listed is not None:  # 阿哲 spoke in this batch: named by id as well
        about["subject_id"] = listed.group(1)
    return Reply.tools(
        (
            "write_memory",
            {
                "token": token.group(1),
                "type": "event",
                **about,
                "content": MOVE,
                "evidence": [int(said.group(1))],
            },
        ),
        ("acknowledge", {"token": token.group(1), "outcome": "extracted", "summary": "搬家"}),
    )


async def write_card(database: Path, user_id: int, content: str) -> None:
    """A person card, as the nightly `people` step appends one (the bot keeps running)."""
    db = Database(Settings(data_dir=database.parent).sqlalchemy_url)
    try:
        now = datetime.now(UTC)
        await PersonCardsRepo(db).append(SCOPE, str(user_id), content, f"{now:%Y-%m-%d}", now)
    finally:
        await db.dispose()


async def test_a_hearsay_memory_reaches_its_subjects_prompt_marked_and_never_sure(
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
        group = Group(peer)
        await group.post("周末有人打羽毛球吗", ZHE)
        await group.post(HEARSAY, ZHOU)
        await wait_until(lambda: count_rows(bot.data_dir, "experiences") == 2)
        rows = await wait_until(
            lambda: query(
                bot.database,
                "SELECT id, subject_kind, subject_person, word FROM memories"
                " WHERE scope = ? AND content = ?",
                (SCOPE, MOVE),
            ),
            timeout_s=60,
        )
        # About 阿哲, on 小周's word alone.
        ((memory_id, kind, person, word),) = rows
        assert (kind, person, word) == ("person", str(ZHE), "hearsay")
        await write_card(bot.database, ZHE, CARD)
        await write_card(bot.database, ZHOU, ZHOU_CARD)

        # 阿哲 asks about his move: the memory comes marked as 小周's word, not sure.
        before = len(openai_server.requests)
        await group.say("我下个月是要搬去哪来着", ZHE, at_bot=True)
        replies = [r for r in openai_server.requests[before:] if not r.body.get("tools")]
        prompt = replies[0].prompt_text
        lines = {int(m.group(1)): m for m in MEMORY_LINE.finditer(prompt)}
        assert memory_id in lines, prompt
        line = lines[memory_id]
        assert (line.group(2), line.group(3), line.group(4)) == ("仅供参考", "阿哲｜小周说", MOVE)
        assert "〔确定" not in line.group(0)
        # The house rules say hearsay is not fact.
        rules = house_rules("大肥鱼", is_private=False).splitlines()
        hearsay_rule = next(r for r in rules if "转述" in r)
        assert "不要当成确定的事实讲出来" in hearsay_rule
        assert hearsay_rule in prompt.splitlines()
        # The asker's card is in the people block; 小周's (not asked, not named) is not.
        people = prompt.split(f"## {PEOPLE_HEADING}\n", 1)[1].split("\n\n", 1)[0]
        assert people.splitlines() == ["【阿哲】- （小周说）下个月搬去深圳；- 喜欢打羽毛球"]
        assert ZHOU_CARD.removeprefix("- ") not in prompt

        # Named in the question, 小周's card comes too (after the asker's).
        before = len(openai_server.requests)
        await group.say("小周最近在忙什么", ZHE, at_bot=True)
        replies = [r for r in openai_server.requests[before:] if not r.body.get("tools")]
        people = replies[0].prompt_text.split(f"## {PEOPLE_HEADING}\n", 1)[1]
        assert people.splitlines()[:2] == [
            "【阿哲】- （小周说）下个月搬去深圳；- 喜欢打羽毛球",
            "【小周】- 在深圳做前端",
        ]


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

    async def post(self, text: str, user_id: int) -> None:
        """Send as `user_id` without waking the bot (nothing to wait for)."""
        self.next_id += 1
        await self.peer.send_event(
            self.peer.group_message(
                text,
                group_id=GROUP,
                message_id=self.next_id,
                user_id=user_id,
                nickname=MEMBERS[user_id],
            )
        )
