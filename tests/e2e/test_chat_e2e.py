"""Issue 5 end to end: the real bot, a OneBot peer playing NapCat, and a real
OpenAI-compatible server on loopback that records every prompt it is sent.

One bot per test keeps the scenarios honest (a real restart-free conversation):
/remember, then an @bot question that recalls it (at most five memories, only this
group's, marker stripped), /why, /mute silencing @bot while archiving goes on,
/unmute, a reply to the bot's own message, a refusal replaced by the fallback after
one retry, and /backfill storing only the messages it had missed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from memory_core.vectors import E5Embedder
from tests.core.relevance_models import WORDS, hand_model
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

from .harness import ApiCall, ApiFailed, OnebotPeer, count_rows, query, running_bot, wait_until

__all__ = ["openai_server"]

pytestmark = pytest.mark.e2e

GROUP = 7001
OTHER = 7002
SCOPE = f"group:{GROUP}"
FALLBACK = "唔……鱼鱼脑子打结了，等下再说~"
MEMORY_LINE = re.compile(r"^#(\d+)〔", re.M)

ENV = {
    "YUJI_CONSOLIDATION_TICK_S": "86400",  # consolidation is not under test here
    "YUJI_BACKFILL_INTERVAL_S": "0",  # only /backfill fetches history
}


def hand_weights(folder: Path) -> dict[str, str]:
    """The bot reads its relevance weights from a file: the hand-made words-only model
    of tests/core (labelled for the bundled embedder), not the retrained shipped one."""
    path = folder / "relevance.json"
    path.write_text(hand_model(E5Embedder().model_id, WORDS).to_json(), encoding="utf-8")
    return {"YUJI_RELEVANCE_WEIGHTS": str(path)}


def is_send(call: ApiCall, group_id: int) -> bool:
    """NoneBot's `bot.send` uses `send_msg`; both shapes count."""
    return call.action in ("send_group_msg", "send_msg") and call.params.get("group_id") == group_id


def text_of(call: ApiCall) -> str:
    message = call.params.get("message")
    if isinstance(message, str):
        return message
    return "".join(
        str(seg.get("data", {}).get("text", ""))
        for seg in message or []
        if isinstance(seg, dict) and seg.get("type") == "text"
    )


def quoted_id(call: ApiCall) -> str | None:
    for seg in call.params.get("message") or []:
        if isinstance(seg, dict) and seg.get("type") == "reply":
            return str(seg["data"]["id"])
    return None


CONSOLIDATION = "后台记忆整理员"
"""Words of the consolidation prompt's first line: a batch the messages start may be
asked of the same model between a wake and its reply."""


def reply_prompt(server: FakeOpenAIServer, before: int) -> str:
    """The prompt of the first reply asked after request number `before`."""
    return next(
        r.prompt_text for r in server.requests[before:] if CONSOLIDATION not in r.prompt_text
    )


def chat_model(body: dict[str, Any]) -> Reply:
    """Answers reply prompts by what is asked; never acknowledges a batch."""
    messages = body.get("messages", [])
    if body.get("tools"):
        return Reply.text("嗯")
    system = str(messages[0].get("content") or "") if messages else ""
    question = str(messages[-1].get("content") or "") if messages else ""
    if "你是谁" in question:
        return Reply.text("作为一个AI语言模型，我无法回答这个问题。")
    if "撤离率" in question:
        found = re.search(r"^#(\d+)〔[^〕]*〕阿明的撤离率是 20%", system, re.M)
        marker = f"[[m:{found.group(1)}]]" if found else ""
        return Reply.text(f"是 20% 哦{marker}")
    return Reply.text("咕噜，在呢")


class Chat:
    """A group conversation with the bot: send, then wait for the bot's answer."""

    def __init__(self, peer: OnebotPeer, group_id: int = GROUP) -> None:
        self.peer = peer
        self.group_id = group_id
        self.next_id = 10_000 + group_id * 100

    async def say(
        self,
        text: str,
        *,
        role: str = "member",
        at_bot: bool = False,
        user_id: int = 20001,
        segments: list[dict[str, Any]] | None = None,
    ) -> int:
        self.next_id += 1
        await self.peer.send_event(
            self.peer.group_message(
                segments or text,
                group_id=self.group_id,
                message_id=self.next_id,
                user_id=user_id,
                nickname="阿明",
                role=role,
                at_bot=at_bot,
            )
        )
        return self.next_id

    def sent_here(self, start: int = 0) -> list[ApiCall]:
        return [c for c in self.peer.calls[start:] if is_send(c, self.group_id)]

    async def ask(self, text: str, **kw: Any) -> ApiCall:
        start = len(self.peer.calls)
        await self.say(text, **kw)
        return (await wait_until(lambda: self.sent_here(start)))[0]


async def test_remember_recall_why_mute_and_fallback(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    openai_server.handler = chat_model
    async with running_bot(
        tmp_path, env={**ENV, **hand_weights(tmp_path), **openai_server.env()}
    ) as bot:
        async with bot.peer() as peer:
            chat, other = Chat(peer), Chat(peer, OTHER)

            answer = await chat.ask("/remember 阿明的撤离率是 20%", role="admin")
            assert text_of(answer).startswith("记住了（#1）：阿明的撤离率是 20%")
            for fact in ("小红喜欢吃火锅", "群里周五晚上开黑", "老王养了两只猫"):
                await chat.ask(f"/remember {fact}", role="owner")
            for i in range(6):  # more candidates than the five slots
                await chat.ask(f"/remember 撤离率的第{i}种算法叫方案{i}", role="admin")
            answer = await other.ask("/remember 另一个群的撤离率是 90%", role="admin")
            assert "记住了" in text_of(answer)

            # A member may not steer the bot.
            assert (
                text_of(await chat.ask("/mute", role="member")) == "只有群主、管理员能用这个命令。"
            )

            # @bot: recalled, at most five memories, only this group's, marker stripped.
            before = len(openai_server.requests)
            answer = await chat.ask("阿明的撤离率是多少", at_bot=True)
            assert text_of(answer) == "是 20% 哦"
            prompt = reply_prompt(openai_server, before)
            assert 1 <= len(MEMORY_LINE.findall(prompt)) <= 5
            assert "阿明的撤离率是 20%" in prompt
            assert "90%" not in prompt
            assert "[[m:" in prompt  # the model was taught the marker syntax

            # /why shows what went into that reply, and that #1 was used.
            why = text_of(await chat.ask("/why"))
            assert why.startswith("上次回话（")
            assert "#1〔字面命中" in why
            assert "用上了" in why

            # /mute: @bot is archived but not answered, and the model is not asked.
            assert "不说话" in text_of(await chat.ask("/mute", role="admin"))
            asked = len(openai_server.requests)
            muted_id = await chat.say("大肥鱼你还在吗", at_bot=True)
            await wait_until(
                lambda: count_rows(bot.data_dir, "experiences", f"fingerprint = '{muted_id}'")
            )
            start = len(peer.calls)
            assert text_of(await chat.ask("/why")).startswith("上次回话（")
            replies = chat.sent_here(start)
            assert all(quoted_id(c) != str(muted_id) for c in replies)
            assert len(openai_server.requests) == asked

            assert text_of(await chat.ask("/unmute", role="admin")) == "我回来啦。"
            answer = await chat.ask("大肥鱼你还在吗", at_bot=True)
            assert text_of(answer) == "咕噜，在呢"

            # A reply to one of the bot's own messages wakes it without an @.
            result_id = await _last_sent_id(bot.database, SCOPE)
            answer = await chat.ask(
                "",
                segments=[
                    {"type": "reply", "data": {"id": str(result_id)}},
                    {"type": "text", "data": {"text": "真的吗"}},
                ],
            )
            assert text_of(answer) == "咕噜，在呢"

            # A refusal is retried once, silently, then replaced by the fallback line.
            before = len(openai_server.requests)
            answer = await chat.ask("你是谁", at_bot=True)
            assert text_of(answer) == FALLBACK
            assert len(openai_server.requests) - before == 2

            sent = [text_of(c) for c in chat.sent_here()]
            assert not any("[[m:" in s or "作为一个AI" in s for s in sent)

        refusals = query(
            bot.database, "SELECT count(*) FROM experiences WHERE text LIKE '%作为一个AI%'"
        )
        assert refusals == [(0,)]
        memories = query(
            bot.database, "SELECT count(*) FROM memories WHERE content LIKE '%鱼鱼脑子%'"
        )
        assert memories == [(0,)]
        hits = query(bot.database, "SELECT hit_count FROM memories WHERE id = 1")
        assert hits == [(1,)]


async def _last_sent_id(database: Path, scope: str) -> str:
    async def found() -> str | None:
        rows = query(
            database,
            "SELECT fingerprint FROM experiences WHERE scope = ? AND is_bot = 1 ORDER BY id DESC LIMIT 1",
            (scope,),
        )
        return str(rows[0][0]) if rows else None

    return str(await wait_until(found))


def history(ids: range) -> list[dict[str, Any]]:
    return [
        {
            "message_id": i,
            "message_seq": i,
            "real_id": i,
            "time": 1_795_000_000 + i,
            "message_type": "group",
            "group_id": GROUP,
            "user_id": 30000 + i % 3,
            "sender": {"user_id": 30000 + i % 3, "nickname": f"同学{i % 3}", "card": ""},
            "message": [{"type": "text", "data": {"text": f"错过的第{i}条"}}],
        }
        for i in ids
    ]


async def test_backfill_stores_only_new_messages(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    served = history(range(1, 61))
    calls: list[dict[str, Any]] = []

    def napcat(action: str, params: dict[str, Any]) -> Any:
        if action == "get_group_msg_history":
            calls.append(params)
            if int(params["group_id"]) != GROUP:
                raise ApiFailed(100, "not in group")
            count = int(params.get("count", 20))
            anchor = params.get("message_seq")
            older = [m for m in served if anchor is None or m["message_id"] <= int(anchor)]
            return {"messages": older[-min(count, 20) :]}
        if action in ("send_group_msg", "send_private_msg", "send_msg"):
            return {"message_id": 800_000 + len(calls) * 10 + len(action)}
        return None

    async with (
        running_bot(tmp_path, env={**ENV, **openai_server.env()}) as bot,
        bot.peer() as peer,
    ):
        peer.handler = napcat
        chat = Chat(peer)
        for item in served[-10:]:  # the newest ten were heard live
            await peer.send_event(
                peer.group_message(
                    item["message"],
                    group_id=GROUP,
                    message_id=item["message_id"],
                    user_id=item["user_id"],
                )
            )
        await wait_until(lambda: count_rows(bot.data_dir, "experiences") == 10)

        answer = text_of(await chat.ask("/backfill 50", role="admin"))
        assert answer == "补拉了 50 条历史消息：新存 40 条，已有 10 条。"
        assert calls[0] == {"group_id": GROUP, "count": 50, "reverse_order": False}

        again = text_of(await chat.ask("/backfill 50", role="admin"))
        assert again == "补拉了 50 条历史消息：新存 0 条，已有 50 条。"
        assert "只有" in text_of(await chat.ask("/backfill", role="member"))

    rows = query(
        bot.database,
        "SELECT source, count(*), count(DISTINCT fingerprint) FROM experiences "
        "WHERE scope = ? AND text LIKE '错过的%' GROUP BY source ORDER BY source",
        (SCOPE,),
    )
    assert rows == [("backfill", 40, 40), ("realtime", 10, 10)]
