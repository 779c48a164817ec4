"""The slash commands' answers, from the ports they are given."""

from __future__ import annotations

import pytest

from memory_core import Yuji
from memory_core.chat.commands import ChatCommands
from memory_core.chat.fake import Card, FakeArchive, FakeCards, FakeRecall, FakeStatus
from memory_core.errors import NotFound
from memory_core.memories.fake import FakeMemories
from memory_core.types import NewExperience


def commands(
    core: Yuji,
    recall: FakeRecall,
    *,
    memories: FakeMemories | None = None,
    archive: FakeArchive | None = None,
) -> ChatCommands:
    return ChatCommands(
        settings=core.live,
        clock=core.clock,
        repo=core.chat_state,
        archive=archive or FakeArchive(core.clock),
        memories=memories or FakeMemories(core.clock),
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


async def test_remember_and_forget_go_through_the_memories_port(core: Yuji) -> None:
    """/remember writes one admin memory citing the command message (archived first);
    /forget retracts it once, in its own chat only."""
    memories, archive = FakeMemories(core.clock), FakeArchive(core.clock)
    made = commands(core, FakeRecall(), memories=memories, archive=archive)
    command = NewExperience(
        scope="group:1",
        fingerprint="cmd-1",
        sender_id="200",
        text="/remember 周五晚上不刷屏",
        sent_at=core.clock.now(),
    )
    done = await made.remember("group:1", " 周五晚上不刷屏 ", command=command, by="200")
    memory = memories.memories[done.memory_id]
    assert (memory.scope, memory.subject, memory.content) == ("group:1", "group", "周五晚上不刷屏")
    assert (memory.origin, memory.importance, memory.confidence) == ("admin", 0.9, 1.0)
    assert [row.fingerprint for row in archive.rows] == ["cmd-1"]
    assert [e.experience_id for e in memories.evidence[memory.id]] == [archive.rows[0].id]
    assert done.text == f"记住了（#{memory.id}）：周五晚上不刷屏"

    with pytest.raises(NotFound):
        await made.forget("group:2", str(memory.id), by="200")
    assert memories.memories[memory.id].status == "active"
    assert f"#{memory.id} 以后不会再想起了" in await made.forget(
        "group:1", f"#{memory.id}", by="200"
    )
    assert memories.memories[memory.id].status == "retracted"
    assert await made.forget("group:1", str(memory.id), by="200") == f"#{memory.id} 早就忘掉了。"
