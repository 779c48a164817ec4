from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memory_core.chat.split import ELLIPSIS, split_reply


def test_short_reply_is_one_message() -> None:
    assert split_reply("  咕噜，好的  ", 300) == ["咕噜，好的"]
    assert split_reply("   ", 300) == []


def test_paragraphs_that_fit_stay_together() -> None:
    assert split_reply("第一段。\n\n第二段。", 300) == ["第一段。\n\n第二段。"]


def test_long_reply_splits_after_sentence_ends() -> None:
    text = "今天天气不错。" * 6 + "我们去钓鱼吧！" * 6
    parts = split_reply(text, 50)
    assert all(len(p) <= 50 for p in parts)
    assert all(p.endswith(("。", "！")) for p in parts)
    assert "".join(parts) == text


def test_a_paragraph_that_must_be_split_starts_a_new_message() -> None:
    parts = split_reply("短的一段。\n\n" + "长句子很长很长。" * 10, 40)
    assert parts[0] == "短的一段。"


def test_latin_sentences_keep_their_spaces() -> None:
    parts = split_reply("This is one. " * 10, 40)
    assert parts[0] == "This is one. This is one. This is one."
    assert all(len(p) <= 40 for p in parts)


def test_runaway_text_is_hard_wrapped_and_capped() -> None:
    parts = split_reply("哈" * 1000, 100, max_parts=3)
    assert len(parts) == 3
    assert parts[-1].endswith(ELLIPSIS)
    assert all(len(p) <= 100 for p in parts)


@given(st.text(min_size=1, max_size=2000), st.integers(min_value=10, max_value=400))
def test_parts_never_exceed_the_limit_and_keep_the_words(text: str, limit: int) -> None:
    parts = split_reply(text, limit, max_parts=1000)
    assert all(0 < len(p) <= limit for p in parts)
    assert "".join("".join(p.split()) for p in parts) == "".join(text.split())
