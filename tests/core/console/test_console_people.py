"""core.console's people pages on a real store (every backend): a chat's members with
their names over time from the person index, one member's memories with whose word
each is, and nothing of another chat, by its list or by a guessed user id."""

from __future__ import annotations

import pytest

from memory_core import Yuji
from memory_core.cli.demo_world import DemoReport, load_demo
from memory_core.console import Actor
from memory_core.errors import NotFound
from tests.fixtures.people_world import (
    BOT,
    GROUP,
    HOSTILE,
    HOSTILE_NAME,
    LIN,
    MENTIONED,
    OTHER,
    OUTSIDER,
    ZHEN,
    mention,
    people_world,
)


@pytest.fixture
async def world(core: Yuji) -> DemoReport:
    loaded = await load_demo(core, people_world())
    await mention(core)
    return loaded


async def test_the_members_are_the_chats_with_their_names_over_time(
    core: Yuji, world: DemoReport
) -> None:
    members = {m.person.user_id: m for m in await core.console.members(GROUP)}
    assert set(members) == {LIN, ZHEN, HOSTILE, BOT, MENTIONED}
    lin = members[LIN]
    assert lin.name == "林林"  # the card they showed last
    assert [(n.name, n.source) for n in lin.names] == [("林林", "card"), ("小林", "card")]
    renamed, first = lin.names
    assert first.last_seen < renamed.first_seen
    assert lin.first_seen == first.first_seen
    assert lin.last_seen == renamed.last_seen
    assert dict(lin.memories) == {"self-only": 1, "hearsay": 1}
    assert lin.memory_count == 2
    assert members[BOT].person.is_bot
    assert not members[LIN].person.is_bot
    assert members[HOSTILE].name == HOSTILE_NAME  # as written: the page escapes it
    assert [(n.name, n.source) for n in members[MENTIONED].names] == [("老王", "mention")]
    assert members[MENTIONED].memory_count == 0


async def test_a_members_view_marks_whose_word_each_memory_is(
    core: Yuji, world: DemoReport
) -> None:
    detail = await core.console.member(GROUP, LIN)
    assert detail.member.name == "林林"
    ids = world.memory_ids[GROUP]
    assert [(m.id, m.content, m.word) for m in detail.memories] == [
        (ids[1], "小林怕狗", "hearsay"),  # 阿珍 said it
        (ids[0], "小林下个月搬去杭州", "self-only"),
    ]
    # a retracted memory stays on the page, with its status
    await core.console.act(GROUP, ids[1], "retract", Actor("192.0.2.7", "session"))
    again = await core.console.member(GROUP, LIN)
    assert [(m.id, m.status) for m in again.memories] == [
        (ids[1], "retracted"),
        (ids[0], "active"),
    ]


async def test_nothing_of_another_chat_shows_nor_answers_a_guessed_id(
    core: Yuji, world: DemoReport
) -> None:
    members = await core.console.members(GROUP)
    assert OUTSIDER not in {m.person.user_id for m in members}
    # 小林 is in both groups: here only this group's names and memories
    lin = await core.console.member(GROUP, LIN)
    assert "别的群的秘密" not in [m.content for m in lin.memories]
    elsewhere = await core.console.member(OTHER, LIN)
    assert [m.content for m in elsewhere.memories] == ["别的群的秘密"]
    assert [n.name for n in elsewhere.member.names] == ["小林"]
    assert elsewhere.member.memories == {"self-only": 1}
    # a member of the other group, or no one, guessed into this group's address
    for guessed in (OUTSIDER, "99999", "", HOSTILE_NAME):
        with pytest.raises(NotFound):
            await core.console.member(GROUP, guessed)
    assert (await core.console.member(OTHER, OUTSIDER)).memories[0].content == "外群的人养鹦鹉"


async def test_a_members_view_carries_their_current_card_of_this_chat_only(
    core: Yuji, world: DemoReport
) -> None:
    lin = (await core.console.member(GROUP, LIN)).member.card
    assert lin is not None
    assert (lin.scope, lin.user_id, lin.version) == (GROUP, LIN, 2)
    assert lin.content == "- 下个月搬去杭州\n- （阿珍说）怕狗"  # the newest version
    assert lin.day is not None
    listed = {m.person.user_id: m.card for m in await core.console.members(GROUP)}
    assert listed[LIN] == lin
    assert {u for u, card in listed.items() if card is not None} == {LIN, HOSTILE}
    # the same person's card in the other group stays there
    elsewhere = (await core.console.member(OTHER, LIN)).member.card
    assert elsewhere is not None
    assert (elsewhere.version, elsewhere.content) == (1, "- 别的群的卡片")
    # a member the nightly never wrote a card for has none
    assert (await core.console.member(GROUP, MENTIONED)).member.card is None
