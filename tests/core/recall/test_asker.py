"""Recall knows who asks: a first person is the sender, "我表姐" is whom their
remembered relation names, and a memory about anyone but the person a wake is about
is never `sure`, whatever P says."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.recall import features, language
from memory_core.recall.decision import Explained, about_someone_else, capped, choose, is_about
from memory_core.recall.question import NOT_PEOPLE, Names
from memory_core.recall.ranking import Points, RankParams
from memory_core.recall.relevance import LEXICAL, RelevanceModel
from memory_core.recall.wake import Turn, read
from memory_core.types import Asker, Memory, Recalled

NOW = datetime(2026, 11, 20, 13, 30, tzinfo=UTC)
MEMBERS = ("阿哲", "小周", "林婷", "宋妍", "老王", "Tom", "Emma")
FACTS = ("的生日是3月14号", "老家在湖南常德", "养了一只柯基", "在深圳做前端", "不吃香菜")


def test_a_first_person_is_the_sender_unless_it_only_frames_the_question() -> None:
    for text in (
        "我生日是几号来着",
        "大肥鱼你还记得我养的什么吗",
        "俺老家哪的",
        "what's my dog called",
    ):
        assert language.speaks_of_self(text.lower()), text
    for text in (
        "我想问问周六几点集合",
        "我记得周六要集合，几点来着",
        "我们周六几点集合",
        "how old is tom",
    ):
        assert not language.speaks_of_self(text.lower()), text
    assert language.speaks_of_self("我记得我生日是三月")  # the second 我 is the topic


def test_the_asker_is_named_by_the_names_the_chat_knows() -> None:
    names = Names.of(["阿哲", "小周"], {"哲哥": "阿哲"})
    wake = read("group:1", "我生日几号来着", names, asker=Asker("1", ("哲哥",)))
    assert wake.question.named == {"阿哲"}
    assert "阿哲" in wake.question.embed_text
    # Unknown to the chat: the name they go by, as it is.
    assert read("group:1", "我生日几号", names, asker=Asker("9", ("新人",))).question.named == {
        "新人"
    }
    # No asker, or no first person: nobody in particular.
    assert read("group:1", "我生日几号", names).question.named == frozenset()
    assert read("group:1", "周六几点集合", names, asker=Asker("1", ("阿哲",))).question.named == (
        frozenset()
    )


def test_kin_words_and_relatives_named_as_possessors() -> None:
    assert "表妹" in language.kin_asked("我表姐生日是几号")
    assert "男女朋友" in language.kin_asked("我对象养的那个叫啥")
    assert "室友" in language.kin_asked("我大学室友哪天结婚来着")
    assert language.kin_asked("阿哲的室友是谁") == ()
    assert language.kin_asked("我生日几号") == ()
    assert not language.mentions_in_person("秦露妈妈的生日是12月2号", "秦露")
    assert language.mentions_in_person("秦露有个弟弟叫秦川", "秦露")
    assert language.mentions(
        "emma和tom在上海是合租室友", "tom"
    )  # CJK does not glue to a latin name
    assert not language.mentions("see you tomorrow", "tom")


def _memory(i: int, subject: str, content: str) -> Memory:
    return Memory(
        id=i, scope="group:1", type="fact", subject=subject, content=content, importance=0.5,
        confidence=0.9, status="active", valid_from=NOW, valid_to=None, version=1,
        origin="model", created_at=NOW, updated_at=NOW, last_accessed_at=None, hit_count=0,
        pinned=False, starred=False,
    )  # fmt: skip


def _everything_sure() -> RelevanceModel:
    """P = .99 for every candidate: only the rule can keep a memory out of `sure`."""
    n = len(features.FEATURES)
    return RelevanceModel(
        LEXICAL, features.FEATURES, np.zeros(n), np.ones(n), np.zeros(n), 4.6, 0.1, 0.5
    )


memories = st.lists(
    st.tuples(st.sampled_from((*MEMBERS, "group")), st.sampled_from(FACTS), st.booleans()),
    min_size=1,
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(
    memories,
    st.sampled_from(MEMBERS),
    st.sampled_from(("我生日几号来着", "我老家哪的", "我养的什么", "阿哲生日几号", "她老家哪的")),
    st.sampled_from(MEMBERS),
)
def test_nothing_about_anyone_but_the_person_asked_about_is_ever_sure(
    said: list[tuple[str, str, bool]], asker: str, text: str, before: str
) -> None:
    names = Names.of(MEMBERS, {})
    # A memory is written about its subject, sometimes naming another member in it.
    mems = [
        _memory(i, subject, f"{subject}{fact}" + (f"，{MEMBERS[i % 7]}也知道" if also else ""))
        for i, (subject, fact, also) in enumerate(said)
    ]
    wake = read(
        "group:1",
        text,
        names,
        context=[Turn(f"{before}今天请大家喝奶茶")],
        asker=Asker("1", (asker,)),
    )
    seen = [features.Seen(m.subject, m.content, False, None, None, 0) for m in mems]
    rows = features.rows(wake.question, seen, features.Baseline())
    ex = Explained(
        question=wake.question,
        memories=tuple(mems),
        seen=tuple(seen),
        rows=rows,
        contradicts={},
        trace=(),
        wake=wake,
        hybrid=np.arange(len(mems)),
        hybrid_words=np.arange(len(mems)),
        names=names,
    )
    about = wake.question.named or wake.lookup.named
    chosen = choose(ex, _everything_sure(), Points.of(0.1, 0.5), NOW, 5, RankParams())
    for item in chosen:
        if item.band == "sure" and about:
            assert is_about(item.memory, about) or item.memory.subject in NOT_PEOPLE, (
                text,
                about,
                item.memory,
            )
    # The judge's bands pass through the same rule.
    judged = tuple(Recalled(i.memory, i.stage, i.score, i.reason, "sure") for i in chosen)
    others = about_someone_else(ex)
    assert all(i.band == "related" for i in capped(judged, others) if i.memory.id in others)
    # A wake about nobody in particular keeps every band.
    if not about:
        assert others == frozenset()
