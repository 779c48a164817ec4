"""The one question analyser and the language knowledge it reads (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memory_core.recall import language
from memory_core.recall.question import Names, analyse, content_terms

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
