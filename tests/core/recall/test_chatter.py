"""The chatter gate (recall/chatter.py): what is left of a wake once the words of chat
that ask nothing are gone, its signals for any text, and the shipped gate's verdict on
wakes written here (not taken from any evaluation set)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.recall import relevance
from memory_core.recall.chatter import SIGNALS, below_the_chat, residue, signals
from memory_core.tokenize import normalise

BOT = ("大肥鱼",)
CHATTER = [
    "早上好呀",
    "哈哈哈哈哈哈",
    "在吗",
    "666666",
    "晚安~",
    "谢谢大肥鱼！",
    "[表情]",
    "[图片][图片]",
    "笑死我了hhhh",
    "good morning!!",
    "lol",
    "thanks 大肥鱼 :)",
    "gn everyone",
    "👍👍👍",
]
QUESTIONS = [
    "小明上次说他去哪玩了？",
    "阿杰的猫叫什么名字",
    "群里谁会修电脑",
    "我们下次聚餐定在哪天来着",
    "what was the name of Sam's dog?",
    "when is Priya moving to Leeds?",
    "老王现在还住在下沙吗",
    # yes/no questions with neither a question word nor a question mark
    "周末爬山能带小孩吗",
    "宿舍里能不能养仓鼠",
    "阿明下个月去北京出差是真的吗",
]
YES_NO = ["周末爬山能带小孩吗", "有没有人去看展", "你们去不去", "is the gym open on sundays"]
NOT_YES_NO = ["在吗", "吃了吗", "真的吗", "是吗", "早上好", "哈哈哈", "ok", "thanks!"]


@pytest.mark.parametrize("text", CHATTER)
def test_chatter_leaves_nothing_to_ask(text: str) -> None:
    assert residue(normalise(text), BOT) == ""


@pytest.mark.parametrize("text", QUESTIONS)
def test_a_question_keeps_what_it_asks_about(text: str) -> None:
    assert residue(normalise(text), BOT) != ""


@pytest.mark.parametrize("text", YES_NO)
def test_a_yes_no_question_is_shaped_as_one(text: str) -> None:
    assert signals(text, False, BOT)[SIGNALS.index("yes_no")] == 1.0


@pytest.mark.parametrize("text", NOT_YES_NO)
def test_a_greeting_ending_in_a_particle_is_not_a_yes_no_question(text: str) -> None:
    assert signals(text, False, BOT)[SIGNALS.index("yes_no")] == 0.0


@given(st.text(max_size=300), st.booleans())
def test_signals_take_any_text(text: str, named: bool) -> None:
    row = signals(text, named, BOT)
    assert row.shape == (len(SIGNALS),)
    assert np.isfinite(row).all()


def test_the_shipped_gate_silences_chatter_and_lets_questions_through() -> None:
    gate = relevance.load(relevance.LEXICAL).chatter
    assert gate is not None
    silenced = [t for t in CHATTER if gate.is_chatter(signals(t, False, BOT))]
    passed = [t for t in QUESTIONS if not gate.is_chatter(signals(t, False, BOT))]
    assert len(silenced) >= len(CHATTER) - 1, silenced
    assert passed == QUESTIONS


# --- a reaction's turns: about something remembered, or small talk ----------------------


def test_turns_near_one_memory_are_about_it_and_turns_near_none_are_small_talk() -> None:
    level = np.full(200, 0.78, dtype=np.float32)  # the chat's ordinary memories
    assert below_the_chat(level, background=0.78)
    near = level.copy()
    near[17] = 0.86  # one memory stands out from the chat and from the background
    assert not below_the_chat(near, background=0.78)
    assert below_the_chat(np.array([], dtype=np.float32), background=0.78)


@given(
    st.lists(st.floats(0.5, 0.9375, width=32), min_size=1, max_size=60),
    st.floats(0.5, 0.95),
    st.floats(0.0, 0.3),
)
def test_a_nearer_memory_never_turns_a_conversation_into_small_talk(
    cosines: list[float], background: float, lift: float
) -> None:
    before = np.array(cosines, dtype=np.float32)
    after = before.copy()
    top = int(np.argmax(after))
    after[top] = min(1.0, float(after[top]) + lift)
    if not below_the_chat(before, background):
        assert not below_the_chat(after, background)


# --- small talk that is no greeting: below the line, no word of any memory -------------


def test_small_talk_no_memory_shares_a_word_with_gets_nothing() -> None:
    gate = relevance.load(relevance.LEXICAL).chatter
    assert gate is not None
    row = signals("the bus was late again", False, BOT)
    assert not gate.is_chatter(row)  # it says more than a phatic wake
    assert gate.says_nothing_remembered(row, shares_a_word=False)


def test_a_question_is_left_to_the_memories_even_with_no_word_in_common() -> None:
    gate = relevance.load(relevance.LEXICAL).chatter
    assert gate is not None
    silenced = [t for t in QUESTIONS if gate.says_nothing_remembered(signals(t, False, BOT), False)]
    assert silenced == []


@given(st.text(max_size=40), st.booleans())
def test_a_wake_sharing_a_word_with_a_memory_is_never_small_talk(text: str, named: bool) -> None:
    gate = relevance.load(relevance.LEXICAL).chatter
    assert gate is not None
    assert not gate.says_nothing_remembered(signals(text, named, BOT), shares_a_word=True)
