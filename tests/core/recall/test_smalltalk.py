"""Small talk by its words (recall/smalltalk.py) and what recall gives it: nothing
when neither the wake nor the turns before it share a word with any memory; the
memories when either does, or when the wake asks something."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core import Yuji
from memory_core.recall import language
from memory_core.recall.smalltalk import asks, idle
from memory_core.recall.wake import Turn
from memory_core.vectors import sync_index
from tests.core.test_recall import write

G1 = "group:1"

IDLE = [
    "腰好酸，不想动",
    "楼下又在装修了",
    "怎么这么热啊",
    "今天什么都不想干",
    "中午不知道吃啥好",
    "你会下棋吗",
    "你平时都干嘛",
    "陪我聊会儿",
    "有没有人在啊",
    "你知道自己多大吗",
    "给我讲个笑话",
    "do you ever get tired?",
    "tell me a story",
    "the bus was late again",
]
ASKS = [
    "小明住哪来着",
    "你还记得我养的猫叫啥吗",
    "你知道小红几号生日吗",
    "他后来去哪了",
    "我上次说的那家店叫什么",
    "你觉得我该换工作吗",
    "where does my sister live?",
    "do you remember my dog's name?",
    "那家店还开着吗",
]


@pytest.mark.parametrize("text", IDLE)
def test_a_wake_that_asks_nothing_or_asks_the_persona_about_itself_is_idle(text: str) -> None:
    assert idle(text, named=False)


@pytest.mark.parametrize("text", ASKS)
def test_a_question_about_someone_or_something_is_not_idle(text: str) -> None:
    assert not idle(text, named=False)


@pytest.mark.parametrize(
    "text", ["什么都行", "怎么又下雨了", "不知道去哪玩", "whatever", "谁都不想理"]
)
def test_a_question_word_used_as_something_else_asks_nothing(text: str) -> None:
    assert not asks(text)


@pytest.mark.parametrize("term", ["周五", "星期天", "明天", "晚上", "tonight", "friday"])
def test_a_time_word_is_a_time_word(term: str) -> None:
    assert language.is_time(term)


@pytest.mark.parametrize("term", ["综合", "吉他", "周末去", "guitar", "fridays off"])
def test_a_word_with_more_than_a_time_in_it_is_not_one(term: str) -> None:
    assert not language.is_time(term)


@given(st.text(max_size=30))
def test_a_wake_naming_a_member_is_never_idle(text: str) -> None:
    assert not idle(text, named=True)


@given(st.text(max_size=30), st.sampled_from(["还记得吗", "来着", "之前说过", "remember?"]))
def test_a_cue_to_remember_is_never_idle(text: str, cue: str) -> None:
    assert not idle(text + cue, named=False)


@given(st.text(max_size=30), st.sampled_from(["他", "她", " they ", " her "]))
def test_a_wake_pointing_back_at_someone_is_never_idle(text: str, pronoun: str) -> None:
    assert not idle(pronoun + text, named=False)


@pytest.mark.parametrize("small_talk", ["腰好酸，今天不想动了", "你会下棋吗"])
async def test_idle_small_talk_gets_nothing_unless_a_word_of_it_or_its_turns_is_remembered(
    core: Yuji, small_talk: str
) -> None:
    guitar = await write(core, G1, "小明每周六去琴行学吉他")
    await write(core, G1, "小红喜欢吃火锅", subject="小红")
    assert core.vectors is not None  # every memory is a dense candidate of every wake
    await sync_index(core.memory_repo, core.vectors.embedder, core.vector_place)

    alone = await core.recall.recall(G1, small_talk)
    assert alone.items == (), alone.trace
    assert any("small talk" in line for line in alone.trace), alone.trace

    # A day's name in common is the day, not something remembered.
    friday = await core.recall.recall(G1, "终于周六了")
    assert friday.items == (), friday.trace

    # A statement naming something remembered is not small talk.
    said = await core.recall.recall(G1, "今天又去琴行了")
    assert guitar in {i.memory.id for i in said.items}

    # Nor is small talk in a conversation about something remembered.
    turns = [Turn("小明的吉他弹得越来越好了", scope=G1), Turn("周六还要去上课", scope=G1)]
    after = await core.recall.recall(G1, small_talk, context=turns)
    assert after.items != ()

    # A question is left to the memories, words in common or none.
    asked = await core.recall.recall(G1, "最近有什么新鲜事")
    assert asked.items != ()
