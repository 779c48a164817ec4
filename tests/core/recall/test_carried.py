"""Carried memories in recall, on a real store (memory_core/recall/carried.py through
core.carrying): a member's own words said in group A reach their private chat by
default and group B when they opt in, labelled and always `related`; a block, a
choice turned off, hearsay and a private chat's secret carry nothing; and the merge
never makes a carried memory `sure` nor takes a `sure` memory's place (Hypothesis)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core import EvidenceRef, NewExperience, Yuji
from memory_core.chat.memory_tool import MemoryTool
from memory_core.llm import ToolCall
from memory_core.prompts.chat import PromptMemory
from memory_core.recall.carried import CARRIED_LABEL, carried_item, merged
from memory_core.storage import InjectedItem
from memory_core.types import Asker, Memory, Recalled

A, B, P7 = "group:1", "group:2", "private:7"
ME = Asker("7", ("小明",))
ASKED = "我搬家是哪天来着"
_fp = itertools.count(1)


async def say(core: Yuji, scope: str, sender: str, name: str, text: str) -> int:
    return await core.archive.append(
        NewExperience(
            scope=scope,
            fingerprint=f"r{next(_fp)}",
            sender_id=sender,
            sender_name=name,
            text=text,
            segments=[{"type": "text", "data": {"text": text}}],
            sent_at=core.clock.now() - timedelta(minutes=5),
        )
    )


async def remember(core: Yuji, scope: str, subject: str, content: str, said: int) -> Memory:
    written = await core.memories.write(
        scope,
        type="event",
        subject=subject,
        content=content,
        evidence=[EvidenceRef(experience_id=said)],
    )
    return written.memory


async def world(core: Yuji) -> dict[str, Memory]:
    """小明 (7) in A, B and his private chat; 阿花 (8) in A and B."""
    moving = await say(core, A, "7", "小明", "我下个月搬家去成都")
    gossip = await say(core, A, "8", "阿花", "小明下个月要搬家去重庆")
    secret = await say(core, P7, "7", "小明", "我搬家其实是因为换工作了")
    await say(core, B, "7", "小明", "大家好")
    await say(core, B, "8", "阿花", "欢迎")
    return {
        "moving": await remember(core, A, "小明", "小明下个月搬家去成都", moving),
        "hearsay": await remember(core, A, "小明", "小明下个月要搬家去重庆", gossip),
        "secret": await remember(core, P7, "小明", "小明搬家是因为换工作", secret),
    }


async def carried_ids(core: Yuji, scope: str, text: str = ASKED, asker: Asker = ME) -> set[int]:
    result = await core.recall.recall(scope, text, asker=asker)
    for item in result.items:
        if item.memory.scope != scope:
            assert item.stage == "carried"
            assert item.band == "related"
            assert CARRIED_LABEL in item.reason
    return {i.memory.id for i in result.items if i.stage == "carried"}


async def test_own_words_follow_them_where_and_when_they_chose(core: Yuji) -> None:
    m = await world(core)
    assert m["moving"].word == "self-only"
    assert m["hearsay"].word == "hearsay"
    # Their private chat: on by default.
    assert await carried_ids(core, P7) == {m["moving"].id}
    # Group B: off until they turn it on; a block refuses it; unblocked it comes back.
    assert await carried_ids(core, B) == set()
    await core.carrying.choose("qq", "7", into_groups=True)
    assert await carried_ids(core, B) == {m["moving"].id}
    await core.carrying.block(B, "8")
    assert await carried_ids(core, B) == set()
    await core.carrying.unblock(B)
    assert await carried_ids(core, B) == {m["moving"].id}
    # Only for a wake about them: 阿花 asking about herself gets nothing of his.
    assert await carried_ids(core, B, "我搬家是哪天来着", Asker("8", ("阿花",))) == set()
    # Turned off: the next recall has none of it.
    await core.carrying.choose("qq", "7", into_private=False)
    assert await carried_ids(core, P7) == set()
    # The private chat's secret never reaches a group, where it was said or not.
    for scope in (A, B):
        ids = {i.memory.id for i in (await core.recall.recall(scope, ASKED, asker=ME)).items}
        assert m["secret"].id not in ids
        assert m["hearsay"].id not in ids or scope == A


async def test_a_member_who_left_gets_nothing_carried_there(core: Yuji) -> None:
    m = await world(core)
    await core.carrying.choose("qq", "7", into_groups=True)
    await core.carrying.left(B, "7", core.clock.now())
    assert await carried_ids(core, B) == set()
    assert await carried_ids(core, P7) == {m["moving"].id}


async def test_forgetting_the_memory_in_its_group_stops_it_travelling(core: Yuji) -> None:
    m = await world(core)
    await core.memories.retract(A, m["moving"].id, reason="forget-me", changed_by="forget-person")
    assert await carried_ids(core, P7) == set()


def _item(i: int, band: str, score: float, stage: str = "lexical") -> Recalled:
    mem = Memory(
        id=i, scope=A, type="fact", subject="x", content="y", importance=0.5,
        confidence=0.9, status="active", valid_from=None, valid_to=None, version=1,
        origin="model", created_at=datetime(2026, 1, 1, tzinfo=UTC),
        updated_at=datetime(2026, 1, 1, tzinfo=UTC), last_accessed_at=None,
        hit_count=0, pinned=False, starred=False,
    )  # fmt: skip
    return Recalled(memory=mem, stage=stage, score=score, reason="", band=band)  # pyright: ignore[reportArgumentType]


bands = st.sampled_from(("sure", "related"))
scores = st.floats(0, 1)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(bands, scores), max_size=6),
    st.lists(scores, max_size=3),
    st.integers(0, 6),
)
def test_a_carried_memory_is_never_sure_and_never_takes_a_sure_place(
    own: list[tuple[str, float]], carried_p: list[float], limit: int
) -> None:
    items = tuple(_item(i, b, s) for i, (b, s) in enumerate(own))
    carried = [carried_item(_item(100 + i, "sure", p).memory, p) for i, p in enumerate(carried_p)]
    out = merged(items, carried, limit)
    assert len(out) <= limit
    kept_sure = [i for i in items[:limit] if i.band == "sure"]
    assert all(i in out for i in kept_sure)
    for item in out:
        if item.stage == "carried":
            assert item.band == "related"
    assert len({i.memory.id for i in out}) == len(out)
    own_order = [i.memory.id for i in out if i.stage != "carried"]
    assert own_order == [i.memory.id for i in items[:limit] if i.memory.id in own_order]


def test_carried_items_fill_free_places_before_weaker_related_ones() -> None:
    own = (_item(1, "sure", 0.9), _item(3, "related", 0.05))
    out = merged(own, [carried_item(_item(2, "related", 0.3).memory, 0.3)], 5)
    assert [i.memory.id for i in out] == [1, 2, 3]
    full = (_item(1, "sure", 0.9), _item(3, "related", 0.05), _item(4, "related", 0.2))
    out = merged(full, [carried_item(_item(2, "related", 0.3).memory, 0.3)], 3)
    assert [i.memory.id for i in out] == [1, 2, 4]  # the weakest related one gave way
    out = merged(full, [carried_item(_item(2, "related", 0.01).memory, 0.01)], 3)
    assert [i.memory.id for i in out] == [1, 3, 4]  # weaker than all: no place


async def test_why_shows_a_carried_memory_only_while_it_may_still_travel(core: Yuji) -> None:
    m = await world(core)
    [item] = [
        i for i in (await core.recall.recall(P7, ASKED, asker=ME)).items if i.stage == "carried"
    ]
    await core.chat_state.add_injection(
        P7,
        trigger_experience_id=None,
        reply_fingerprint=None,
        query=ASKED,
        items=[InjectedItem(item.memory.id, item.stage, item.score, item.reason)],
        now=core.clock.now(),
    )
    shown = await core.chat_commands.why(P7)
    assert "在别的群说过" in shown
    assert m["moving"].content in shown
    assert "group:1" not in shown
    await core.carrying.choose("qq", "7", into_private=False)
    assert m["moving"].content not in await core.chat_commands.why(P7)


async def test_the_memory_tool_finds_what_recall_carries(core: Yuji) -> None:
    m = await world(core)

    async def search(query: str) -> tuple[Recalled, ...]:
        return (await core.recall.recall(P7, query, asker=ME)).items

    def render(item: Recalled) -> PromptMemory:
        return PromptMemory(id=item.memory.id, content=item.memory.content, stage=item.stage)

    tool = MemoryTool(search, P7, render)
    answer = await tool.handle(ToolCall("c1", "search_memory", '{"query": "我搬家是哪天来着"}'))
    assert m["moving"].id in {i.memory.id for i in tool.found}
    assert "在别的群说过" in answer
    assert m["hearsay"].content not in answer


async def test_forget_person_in_the_group_it_was_said_stops_it_everywhere(core: Yuji) -> None:
    m = await world(core)
    await core.carrying.choose("qq", "7", into_groups=True)
    assert await carried_ids(core, B) == {m["moving"].id}
    await core.porting.forget_person(A, "7", requested_by="cli")
    assert await carried_ids(core, B) == set()
    assert await carried_ids(core, P7) == set()


async def test_forget_person_in_a_target_group_ends_carrying_into_it(core: Yuji) -> None:
    m = await world(core)
    await core.carrying.choose("qq", "7", into_groups=True)
    await core.porting.forget_person(B, "7", requested_by="cli")
    # Their names there are gone: no longer seen as a member of B.
    assert await carried_ids(core, B) == set()
    assert await carried_ids(core, P7) == {m["moving"].id}


async def test_a_wake_naming_a_member_carries_their_words_not_the_askers(core: Yuji) -> None:
    m = await world(core)
    nice = await say(core, B, "8", "阿花", "小明人很好")
    await remember(core, B, "小明", "小明人很好", nice)  # B knows the name 小明
    await core.carrying.choose("qq", "7", into_groups=True)
    await core.carrying.choose("qq", "8", into_groups=True)
    asked = "小明搬家是哪天来着"
    assert await carried_ids(core, B, asked, Asker("8", ("阿花",))) == {m["moving"].id}
    # Nobody named, nobody asking about themselves: nothing.
    assert await carried_ids(core, B, "搬家是哪天来着", Asker("8", ("阿花",))) == set()
