from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.errors import LLMBadResponse, LLMTimeout
from memory_core.llm.fake import ScriptedLLM, text_response
from memory_core.nightly.asking import (
    InvalidReply,
    ask,
    extract_json,
    judge,
    out_of_character,
    temperatures,
)
from memory_core.prompts.nightly import DiaryReply, SettleReply, diary_prompt
from memory_core.settings import Settings

OOC = Settings().ooc_patterns
PROMPT = diary_prompt([], [], day="2026-11-20", scope_label="group:1", bot_name="大肥鱼")


def test_temperatures_start_at_base_and_fall_to_zero() -> None:
    assert temperatures(0.7, 5) == [0.7, 0.56, 0.42, 0.28, 0.14, 0.0]
    assert temperatures(0.7, 0) == [0.7]


@given(base=st.floats(0.0, 2.0), retries=st.integers(0, 10))
def test_temperatures_never_rise_and_never_go_negative(base: float, retries: int) -> None:
    temps = temperatures(base, retries)
    assert len(temps) == retries + 1
    assert all(a >= b for a, b in itertools.pairwise(temps))
    assert all(t >= 0 for t in temps)
    if retries and base > 0:
        assert temps[-1] == 0.0


def test_extract_json_tolerates_fences_and_chatter() -> None:
    assert extract_json('```json\n{"diary": "x"}\n```') == {"diary": "x"}
    assert extract_json('好的：{"diary": "x"} 以上') == {"diary": "x"}


def test_out_of_character_looks_at_the_opening_only() -> None:
    assert out_of_character(["作为一个AI，我无法写日记"], OOC)
    assert out_of_character(["今天南杉说起她的猫。" * 10 + "作为一个AI"], OOC) is None


def test_judge_reasons() -> None:
    assert judge("", DiaryReply, OOC, None) == "empty reply"
    assert str(judge("不是 JSON", DiaryReply, OOC, None)).startswith("not JSON")
    assert str(judge("抱歉，我无法协助", DiaryReply, OOC, None)).startswith("out of character")
    assert str(judge('{"diary": ""}', DiaryReply, OOC, None)).startswith("schema: diary")
    assert str(judge('{"diary": "对不起，我不能写"}', DiaryReply, OOC, None)).startswith(
        "out of character"
    )
    assert judge('{"rewrites": []}', SettleReply, OOC, lambda r: "missing ids") == (
        "check: missing ids"
    )
    value = judge('{"diary": "南杉养了一只猫。"}', DiaryReply, OOC, None)
    assert isinstance(value, DiaryReply)
    assert value.diary == "南杉养了一只猫。"


async def test_valid_first_time_asks_once_at_the_base_temperature() -> None:
    llm = ScriptedLLM([text_response('{"diary": "好的一天"}')])
    asked = await ask(llm, PROMPT, base_temperature=0.7, retries=5, ooc_patterns=OOC)
    assert (asked.value.diary, asked.attempts, asked.reasons) == ("好的一天", 1, ())
    assert [r.temperature for r in llm.requests] == [0.7]


async def test_invalid_then_valid_retries_cooler() -> None:
    llm = ScriptedLLM(
        [
            text_response("抱歉，我无法完成这个请求"),
            text_response('{"diary": 3}'),
            LLMBadResponse("garbage body"),
            text_response('{"diary": "好的一天"}'),
        ]
    )
    asked = await ask(llm, PROMPT, base_temperature=0.7, retries=5, ooc_patterns=OOC)
    assert asked.value.diary == "好的一天"
    assert asked.attempts == 4
    assert [r.temperature for r in llm.requests] == [0.7, 0.56, 0.42, 0.28]
    assert asked.reasons[0].startswith("out of character")
    assert asked.reasons[1].startswith("schema")


async def test_always_invalid_gives_up_after_five_retries() -> None:
    llm = ScriptedLLM(default=text_response("作为一个AI语言模型，我不能写日记。"))
    with pytest.raises(InvalidReply) as caught:
        await ask(llm, PROMPT, base_temperature=0.7, retries=5, ooc_patterns=OOC)
    assert len(llm.requests) == 6
    assert len(caught.value.reasons) == 6
    assert [r.temperature for r in llm.requests][-1] == 0.0


async def test_transport_errors_are_not_retried_here() -> None:
    llm = ScriptedLLM([LLMTimeout("slow")])
    with pytest.raises(LLMTimeout):
        await ask(llm, PROMPT, base_temperature=0.7, retries=5, ooc_patterns=OOC)
    assert len(llm.requests) == 1
