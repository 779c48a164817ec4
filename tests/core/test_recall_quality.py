"""Recall-quality principles: the version a found memory replaced answers "以前…"
questions, and words naming the kind of answer never count against a memory."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from memory_core import FakeClock, Yuji
from memory_core.recall import scoring
from memory_core.recall.query import analyse, answer_slots
from memory_core.types import EvidenceRef, NewExperience

G1 = "group:1"


async def write(core: Yuji, content: str, *, subject: str = "小明") -> int:
    exp = await core.archive.append(
        NewExperience(
            scope=G1,
            fingerprint=f"{G1}-{content}",
            sender_id="1",
            text=content,
            sent_at=core.clock.now(),
        )
    )
    out = await core.memories.write(
        G1,
        type="state",
        subject=subject,
        content=content,
        evidence=[EvidenceRef(experience_id=exp)],
    )
    return out.memory.id


async def test_retrospective_question_brings_the_replaced_version_even_when_slots_are_full(
    core: Yuji, clock: FakeClock
) -> None:
    old = await write(core, "桌游局一般在老周家开，每周六下午两点开始")
    clock.advance(timedelta(days=30))
    new = await write(core, "老周家装修，桌游局改到骰子工坊，每周六下午在包间玩")
    for i, extra in enumerate(["有投影", "停车很难", "包间费每人30块", "附近有地铁", "老板很热情"]):
        await write(core, f"骰子工坊{extra}{i}")
    out = await core.memories.supersede(G1, old, new, reason="换地方了", changed_by="model")
    assert out.applied
    before = await core.recall.recall(G1, "以前没去骰子工坊的时候都在哪儿玩的")
    ids = [r.memory.id for r in before.items]
    assert old in ids
    assert "前后版本" in next(r.reason for r in before.items if r.memory.id == old)
    # Asked about the present, the replaced version stays out.
    now = await core.recall.recall(G1, "现在在骰子工坊哪里玩")
    assert old not in [r.memory.id for r in now.items]


def test_answer_slot_words_follow_question_words() -> None:
    assert "牌子" in answer_slots("团子以前吃的什么牌子的粮")
    assert "道菜" in answer_slots("我最馋我妈做的哪道菜")
    assert "称呼" in answer_slots("私聊你该怎么称呼我")
    assert answer_slots("小明喜欢吉他") == frozenset()


@given(noun=st.sampled_from(["牌子", "品牌", "型号", "款式", "颜色"]))
def test_a_slot_word_the_chat_never_used_does_not_weigh_against(noun: str) -> None:
    q = analyse(f"团子吃的什么{noun}的猫粮")
    w = scoring.Weights(q, {"团子": 3, "猫粮": 2}, 50, scoring.Params())
    assert noun not in w.unknown_words
    hit = scoring.match(w, 1, frozenset({"团子", "猫粮", "皇家"}))
    assert hit is not None
    assert hit.cover == 1.0
