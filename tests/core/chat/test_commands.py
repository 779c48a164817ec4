"""The slash commands' answers, from the ports they are given."""

from __future__ import annotations

from memory_core import Yuji
from memory_core.chat.commands import ChatCommands
from memory_core.chat.fake import Card, FakeArchive, FakeCards, FakeRecall, FakeStatus


def commands(core: Yuji, recall: FakeRecall) -> ChatCommands:
    return ChatCommands(
        settings=core.live,
        clock=core.clock,
        repo=core.chat_state,
        archive=FakeArchive(core.clock),
        memories=core.memories,
        recall=recall,
        status=FakeStatus(pending=7),
        cards=FakeCards([Card("rule", "周五晚上不刷屏")]),
    )


async def test_status_and_cards_come_from_their_ports(core: Yuji) -> None:
    made = commands(core, FakeRecall())
    assert "待整理消息：7 条" in await made.status("group:1")
    assert "周五晚上不刷屏" in await made.cards("group:1")


async def test_a_recall_preview_asks_the_recall_port(core: Yuji) -> None:
    recall = FakeRecall()
    await commands(core, recall).recall_preview("group:1", "阿明去哪了")
    assert [(scope, text) for scope, text, _ in recall.calls] == [("group:1", "阿明去哪了")]
