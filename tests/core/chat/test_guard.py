from __future__ import annotations

import logging

import pytest

from memory_core import Settings
from memory_core.chat.guard import OutOfCharacterGuard

GUARD = OutOfCharacterGuard(Settings().ooc_patterns)


@pytest.mark.parametrize(
    "reply",
    [
        "作为一个AI，我没有个人喜好。",
        "我是一个人工智能语言模型。",
        "抱歉，我无法回答这个问题。",
        "对不起，我不能提供这方面的信息",
        "我无法协助你完成这个请求",
        "As an AI, I don't have feelings.",
        "I'm sorry, but I can't help with that.",
        "",
        "   ",
    ],
)
def test_default_patterns_catch_out_of_character_replies(reply: str) -> None:
    assert GUARD.check(reply).ok is False


@pytest.mark.parametrize(
    "reply", ["咕噜，今天好冷", "抱歉抱歉，刚才睡着了", "我无所谓啦", "AI 画的图还挺好看"]
)
def test_in_character_replies_pass(reply: str) -> None:
    assert GUARD.check(reply).ok is True


def test_operator_patterns_replace_the_defaults_and_bad_ones_are_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="yuji.chat"):
        guard = OutOfCharacterGuard(["不想说", "([unclosed"])
    assert len(guard.patterns) == 1
    assert "invalid ooc pattern" in caplog.text
    assert guard.check("我不想说").ok is False
    assert guard.check("作为一个AI").ok is True
