"""The one question analyser and the language knowledge it reads (pure)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from memory_core.recall import language
from memory_core.recall.question import Names, analyse, content_terms
from memory_core.tokenize import bigram_tokens, is_cjk

NAMES = Names.of(["张磊", "王芳", "group"], {"老三": "张磊", "芳芳": "王芳"}, ["大肥鱼"])


def test_a_nickname_resolves_to_its_member_and_leaves_the_content() -> None:
    q = analyse("@大肥鱼 老三最近在学什么乐器来着？", NAMES, ["大肥鱼"])
    assert q.named == {"张磊"}
    assert "张磊" in q.embed_text
    assert "老三" not in q.embed_text
    assert "大肥鱼" not in q.embed_text
    assert {"乐器"} <= q.terms
    assert not any("老三" in t or "磊" in t for t in q.terms)  # names are not content
    assert not {"什么", "来着", "最近"} & q.terms  # neither is the question frame


def test_the_kind_of_answer_asked() -> None:
    assert analyse("芳芳什么时候搬的家", NAMES).asks == "time"
    assert analyse("张磊养了几只猫", NAMES).asks == "number"
    assert analyse("王芳住在哪里", NAMES).asks == "place"
    assert analyse("谁负责订票", NAMES).asks == "person"
    assert analyse("张磊喜欢猫", NAMES).asks is None


def test_units_money_and_the_thing_asked_about() -> None:
    q = analyse("张磊养了几只猫", NAMES)
    assert q.unit == "只"
    assert language.counts_in("张磊养了两只猫", "只")
    assert not language.counts_in("张磊的猫六个月大", "只")
    assert analyse("王芳的房租多少", NAMES).money
    assert language.money_stated("房租每月2800元")
    assert not language.money_stated("房子在3楼")
    assert analyse("张磊用的什么牌子的相机", NAMES).focus == "牌子"


def test_time_cues() -> None:
    assert analyse("芳芳以前住哪", NAMES).retrospective
    assert not analyse("芳芳住哪", NAMES).retrospective
    assert analyse("张磊还在杭州吗", NAMES).still


def test_the_bot_is_not_a_member() -> None:
    assert "大肥鱼" not in NAMES.canonical
    assert "group" not in NAMES.canonical


@given(st.text(max_size=40))
def test_content_terms_never_hold_pure_grammar(text: str) -> None:
    grammar = language.function_chars()
    for term in content_terms(text):
        assert not all(ch in grammar for ch in term)


@given(st.text(max_size=40))
def test_analysis_takes_any_text(text: str) -> None:
    q = analyse(text, NAMES)
    assert q.named <= set(NAMES.canonical.values())


EN_NAMES = Names.of(["Tom", "Dan", "Alex", "group"], {"Al": "Alex", "Tommo": "Tom"})


def test_a_latin_name_is_a_whole_word() -> None:
    assert analyse("What is Tom doing tomorrow?", EN_NAMES).named == {"tom"}
    assert analyse("Who is going to the dance tomorrow?", EN_NAMES).named == frozenset()
    assert analyse("Has Al called? Is it all fine?", EN_NAMES).named == {"alex"}
    assert analyse("What's Tommo's car?", EN_NAMES).named == {"tom"}
    assert "tomorrow" in analyse("What is Tom doing tomorrow?", EN_NAMES).terms
    assert language.mentions("tom's sister is getting married", "tom")
    assert not language.mentions("see you tomorrow", "tom")


def test_english_cues_are_whole_words() -> None:
    assert not analyse("Do you know where Dan works?", EN_NAMES).still
    assert analyse("Is Dan still at the bakery?", EN_NAMES).still
    assert analyse("Where did Dan use to work?", EN_NAMES).retrospective
    assert not analyse("Where does Dan work?", EN_NAMES).retrospective


def test_the_kind_of_answer_an_english_question_asks_and_a_memory_states() -> None:
    assert analyse("What time is standup?", EN_NAMES).asks == "time"
    assert analyse("How many cats does Dan have?", EN_NAMES).asks == "number"
    assert analyse("Which city does Tom live in?", EN_NAMES).asks == "place"
    assert language.states("standup is at 9:30am", "time")
    assert language.states("they meet every tuesday evening", "time")
    assert not language.states("dan likes cats", "time")
    assert language.states("dan has two cats", "number")
    assert not language.states("dan has cats", "number")
    written = "Leo works remotely from Denver"
    assert language.states(written.lower(), "place", written)
    assert not language.states("leo works remotely", "place", "Leo works remotely")
    # a move states where someone now is, whether or not the place's name says "区"
    assert language.states("阿杰上个月搬到了滨江", "place")
    assert language.states("我们家搬回老城了", "place")
    assert not language.states("阿杰上个月换了工作", "place")


def test_english_inflections_meet_at_one_stem() -> None:
    for forms in (
        ("move", "moved", "moving", "moves"),
        ("party", "parties"),
        ("run", "running", "runs"),
        ("study", "studies", "studied"),
    ):
        assert len({language.stem(w) for w in forms}) == 1, forms
        for w in forms:
            assert set(forms) <= language.word_forms(w) | {w}, w
    assert language.stem("class") == "class"
    assert language.stem("吉他") == "吉他"
    assert language.word_forms("吉他") == {"吉他"}


def test_the_share_of_latin_letters() -> None:
    assert analyse("Where does Dan work?", EN_NAMES).latin == 1.0
    assert analyse("张磊在哪", NAMES).latin == 0.0
    assert 0 < analyse("张磊的YY号", NAMES).latin < 1


@given(st.text(alphabet=st.characters(codec="ascii"), max_size=20))
def test_every_form_of_a_word_shares_its_stem(word: str) -> None:
    root = language.stem(word)
    assert all(language.stem(f) == root for f in language.word_forms(word) - {word})


def _terms_word_by_word(text: str) -> frozenset[str]:
    """content_terms as first written: every frame word removed in turn, a latin one
    by a whole-word pattern built on the spot."""
    for word in language.frame_words():
        if word.isascii():
            text = re.sub(rf"\b{re.escape(word)}\b", " ", text)
        else:
            text = text.replace(word, " ")
    grammar = language.function_chars()
    return frozenset(
        t
        for t in bigram_tokens(text)
        if (not all(ch in grammar for ch in t) if is_cjk(t[0]) else len(t) >= 2 or t.isdigit())
    )


_FRAMES = [w for w in language.frame_words() if len(w) <= 6][:80]


@given(
    st.lists(
        st.sampled_from([*_FRAMES, "小明", "吉他", "周六", "tom", "leeds", " ", "的"]), max_size=8
    )
)
def test_frame_words_are_removed_as_one_by_one(parts: list[str]) -> None:
    text = "".join(parts)
    assert content_terms(text) == _terms_word_by_word(text)
