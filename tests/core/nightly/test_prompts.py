"""The nightly prompts are pinned: a change to their text shows up here on purpose.

Regenerate after an intended change with `YUJI_UPDATE_SNAPSHOTS=1 pytest <this file>`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import get_args

import pytest
from pydantic import BaseModel

from memory_core.prompts.nightly import (
    CARD_LABELS,
    CardKind,
    CardsReply,
    CardText,
    DiaryReply,
    EventsReply,
    FragmentLine,
    Prompt,
    SettleReply,
    StateLine,
    StatesReply,
    cards_prompt,
    diary_prompt,
    events_prompt,
    settle_prompt,
    states_prompt,
)
from memory_core.storage.schema import CARD_KINDS

SNAPSHOTS = Path(__file__).parent / "snapshots"
STATES = [StateLine(7, "南杉", "这周在杭州出差", "2026-11-20")]
FRAGMENTS = [
    FragmentLine(3, "11-20 21:03–21:40", "南杉说出差回来了，约小白周六爬山。"),
    FragmentLine(4, "11-20 23:10–23:30", "小白说最近改吃辣了。"),
]
CARDS = [
    CardText("preferences", "喜欢清淡口味"),
    CardText("interaction_patterns", ""),
    CardText("recent_status", "南杉这周在杭州出差"),
    CardText("goals", ""),
    CardText("relationships", "南杉和小白是大学同学"),
    CardText("key_events", ""),
    CardText("interaction_rules", "不在群里发语音"),
]
DIARY = "南杉出差回来，约小白周六去爬山。小白说最近改吃辣了。"

CASES: dict[str, tuple[Prompt[BaseModel], type[BaseModel]]] = {
    "settle": (settle_prompt(STATES, day="2026-11-20", bot_name="大肥鱼"), SettleReply),  # type: ignore[dict-item]
    "diary": (
        diary_prompt(
            FRAGMENTS,
            ["南杉那周在杭州出差（已结束）"],
            day="2026-11-20",
            scope_label="group:100",
            bot_name="大肥鱼",
        ),
        DiaryReply,
    ),  # type: ignore[dict-item]
    "cards": (cards_prompt(CARDS, DIARY, day="2026-11-20", bot_name="大肥鱼"), CardsReply),  # type: ignore[dict-item]
    "states": (states_prompt(STATES, DIARY, day="2026-11-20", bot_name="大肥鱼"), StatesReply),  # type: ignore[dict-item]
    "events": (
        events_prompt(FRAGMENTS, ["南杉11月初去杭州出差"], day="2026-11-20", bot_name="大肥鱼"),
        EventsReply,
    ),  # type: ignore[dict-item]
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_prompt_text_is_pinned(name: str) -> None:
    prompt, _ = CASES[name]
    path = SNAPSHOTS / f"{name}.txt"
    text = prompt.render()
    if os.environ.get("YUJI_UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_prompt_is_paired_with_its_response_model(name: str) -> None:
    prompt, response = CASES[name]
    assert prompt.response is response
    assert [m.role for m in prompt.messages] == ["system", "user"]
    assert "JSON" in (prompt.messages[0].content or "")


def test_prompts_are_pure() -> None:
    assert settle_prompt(STATES, day="2026-11-20", bot_name="大肥鱼") == settle_prompt(
        STATES, day="2026-11-20", bot_name="大肥鱼"
    )


def test_the_card_kinds_agree_with_the_schema() -> None:
    # The reply's Literal and the labels restate the table's CHECK list: keep them one list.
    assert get_args(CardKind) == CARD_KINDS == tuple(CARD_LABELS)
