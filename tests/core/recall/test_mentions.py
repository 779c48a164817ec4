"""A wake that @-mentions a member names them (memory_core/recall/mentions.py): the
question reads them as named (the @ says whom, no word more), recall ranks their
memories as about the person asked about, and carrying counts the wake as about
them; the persona's own @ and another account of ours are no member."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from memory_core import EvidenceRef, FakeClock, Incoming, NewExperience, Settings, Yuji
from memory_core.chat.fake import FakeRecall
from memory_core.chat.service import recall_turn
from memory_core.recall.question import Names, analyse
from memory_core.types import Asker, Memory

A, B = "group:1", "group:2"
ZHE, HUA, BOT = "9", "8", "10000"
HUA_ASKS = Asker(HUA, ("阿花",))
_fp = itertools.count(1)


@pytest.fixture
async def words(settings: Settings, clock: FakeClock) -> AsyncIterator[Yuji]:
    """A core with the bundled words-only weights (as YUJI_VECTOR_MODE=off runs): the
    wakes below ask with no content word but the member they name."""
    opened = await Yuji.open(settings.model_copy(update={"vector_mode": "off"}), clock=clock)
    try:
        yield opened
    finally:
        await opened.close()


async def say(
    core: Yuji, scope: str, sender: str, name: str, text: str, *, is_bot: bool = False
) -> int:
    return await core.archive.append(
        NewExperience(
            scope=scope,
            fingerprint=f"m{next(_fp)}",
            sender_id=sender,
            sender_name=name,
            text=text,
            segments=[{"type": "text", "data": {"text": text}}],
            sent_at=core.clock.now() - timedelta(minutes=5),
            is_bot=is_bot,
        )
    )


async def remember(core: Yuji, scope: str, subject: str, content: str, said: int) -> Memory:
    written = await core.memories.write(
        scope,
        type="fact",
        subject=subject,
        content=content,
        evidence=[EvidenceRef(experience_id=said)],
    )
    return written.memory


async def world(core: Yuji) -> dict[str, Memory]:
    """阿哲 (9) says in A where he goes next month, and in B that he has a corgi; 阿花 (8)
    says in B that she has a cat; the persona's account (10000) speaks in B."""
    trip = await say(core, A, ZHE, "阿哲", "我下个月去成都出差")
    dog = await say(core, B, ZHE, "阿哲", "我养了一只柯基叫豆豆")
    cat = await say(core, B, HUA, "阿花", "我养了一只布偶猫叫年糕")
    await say(core, B, BOT, "大肥鱼", "欢迎欢迎", is_bot=True)
    return {
        "trip": await remember(core, A, "阿哲", "阿哲下个月去成都出差", trip),
        "dog": await remember(core, B, "阿哲", "阿哲养了一只柯基叫豆豆", dog),
        "cat": await remember(core, B, "阿花", "阿花养了一只布偶猫叫年糕", cat),
    }


async def carried(core: Yuji, text: str, mentioned: tuple[str, ...] = ()) -> set[int]:
    result = await core.recall.recall(B, text, asker=HUA_ASKS, mentioned=mentioned)
    return {i.memory.id for i in result.items if i.stage == "carried"}


def test_an_at_names_the_member_and_says_no_word_of_the_wake() -> None:
    names = Names.of(["阿哲", "阿花"], {"哲哥": "阿哲"})
    for text, shown in (("@10001 他下个月去哪", "10001"), ("@哲哥 他下个月去哪", "哲哥")):
        q = analyse(text, names, mentioned=(Asker("10001", ("哲哥",)),))
        assert q.named == {"阿哲"}
        assert q.persons == {"10001"}
        assert not any(shown in t for t in q.terms)
        assert "阿哲" in q.embed_text
        assert "10001" not in q.embed_text
    # A member the chat's memories never name: named by the name they go by.
    q = analyse("@10002 他是谁", names, mentioned=(Asker("10002", ("新人",)),))
    assert (q.named, q.persons) == ({"新人"}, {"10002"})
    # No mention: an id in the text is a word like any other.
    assert analyse("@10001 他下个月去哪", names).persons == frozenset()


async def test_an_at_of_a_member_who_opted_in_carries_their_words_into_this_group(
    words: Yuji,
) -> None:
    core = words
    m = await world(core)
    await core.carrying.choose("qq", ZHE, into_groups=True)
    assert await carried(core, "@阿哲 他下个月去哪", (ZHE,)) == {m["trip"].id}
    assert await carried(core, f"@{ZHE} 他下个月去哪", (ZHE,)) == {m["trip"].id}
    # Without the @ and without his name the wake is about no one: nothing carried.
    assert await carried(core, "他下个月去哪") == set()
    # Not opted in: the @ alone carries nothing.
    await core.carrying.choose("qq", ZHE, into_groups=False)
    assert await carried(core, f"@{ZHE} 他下个月去哪", (ZHE,)) == set()


async def test_an_at_ranks_the_members_memories_as_about_the_person_asked_about(
    core: Yuji,
) -> None:
    m = await world(core)
    result = await core.recall.recall(B, f"@{ZHE} 他养的宠物叫什么", mentioned=(ZHE,))
    assert [i.memory.id for i in result.items][:1] == [m["dog"].id]
    assert all(i.band == "related" for i in result.items if i.memory.id == m["cat"].id)
    # The same words with no mention read "9" as a word and name no one.
    unnamed = await core.recall.recall(B, f"@{ZHE} 他养的宠物叫什么")
    assert [i.memory.id for i in unnamed.items][:1] != [m["dog"].id]
    ex = await core.recall.explain(B, f"@{ZHE} 他养的宠物叫什么", mentioned=(ZHE,))
    assert ex.question.named == {"阿哲"}
    assert ex.question.persons == {ZHE}


async def test_the_personas_own_at_and_another_account_of_ours_are_no_member(
    core: Yuji,
) -> None:
    await world(core)
    ex = await core.recall.explain(B, f"@{BOT} 他下个月去哪", mentioned=(BOT, "all"))
    assert ex.question.persons == frozenset()
    assert ex.question.named == frozenset()
    # The chat path hands recall the members a wake @s, never the persona it wakes.
    recall = FakeRecall()
    wake = Incoming(
        scope=B,
        fingerprint="w1",
        sender_id=HUA,
        sender_name="阿花",
        text="他下个月去哪",
        sent_at=core.clock.now(),
        self_id=BOT,
        is_private=False,
        mentioned_ids=(BOT, ZHE),
    )
    assert wake.members_mentioned == (ZHE,)
    await recall_turn(
        recall, B, wake.text, now=core.clock.now(), limit=5, mentioned=wake.members_mentioned
    )
    assert recall.mentioned == [(ZHE,)]
