"""Prompt assembly: snapshots pin the text; properties pin order and budgets.

Regenerate snapshots after an intended change with YUJI_UPDATE_SNAPSHOTS=1.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from memory_core.prompts.budget import estimate_tokens, take_within, truncate_to
from memory_core.prompts.chat import (
    FOLLOWUPS_HEADING,
    QUOTES_HEADING,
    ChatPromptInput,
    PromptBudget,
    PromptFollowUp,
    PromptLine,
    PromptMemory,
    PromptQuote,
    build_chat_prompt,
)
from memory_core.recall import RELATED_LABEL

SNAPSHOTS = Path(__file__).parent / "snapshots"
PERSONA = (
    Path(__file__).resolve().parents[3] / "memory_core" / "prompts" / "persona_default.md"
).read_text("utf-8")


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("YUJI_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, "utf-8")
    assert text == path.read_text("utf-8")


def render(prompt_messages: list[tuple[str, str]]) -> str:
    return "\n".join(f"=== {role}\n{content}" for role, content in prompt_messages)


def minimal() -> ChatPromptInput:
    return ChatPromptInput(
        persona=PERSONA,
        bot_name="大肥鱼",
        now="2026-11-20 20:00 周五",
        is_private=False,
        message=PromptLine("阿明", "大肥鱼在吗", "20:00"),
    )


def full() -> ChatPromptInput:
    return ChatPromptInput(
        persona=PERSONA,
        bot_name="大肥鱼",
        now="2026-11-20 20:00 周五",
        is_private=False,
        message=PromptLine("阿明", "鱼鱼，撤离率是多少来着？", "20:00"),
        states=("阿明这周在出差（到 11-22）",),
        cards=(("preferences", "阿明爱吃辣"), ("goals", " "), ("key_events", "11-01 群里开黑")),
        timeline=("10-01 阿明进群", "11-01 第一次一起开黑"),
        recent_diaries=(("2026-11-19", "大家聊了火锅。"),),
        memories=(
            PromptMemory(
                3,
                "撤离率 20%",
                "lexical",
                "阿明",
                "字面命中「撤离率」",
                since="2026-11-01",
                contradicts=7,
            ),
            PromptMemory(
                5,
                "阿明养了一只猫",
                "vector",
                reason=f"{RELATED_LABEL}（相关度 0.55：语义相近）",
                band="related",
            ),
            PromptMemory(7, "撤离率 30%", "lexical", "阿明"),
            PromptMemory(9, "阿明在杭州出差", "graph", "阿明", "与#3相关", until="2026-11-22"),
            PromptMemory(12, "阿哲下个月搬去深圳", "lexical", "阿哲", said="小周说"),
        ),
        people=(("阿明", "爱吃辣\n这周在杭州出差"), ("阿哲", "（小周说）下个月搬去深圳")),
        followup=PromptFollowUp(21, "阿明", "阿明11月18日考四级", "2026-11-18"),
        quotes=(PromptQuote(812, "小红", "18:02", "我下周三去杭州面试"),),
        background_diary=("2026-10-01", "阿明进群那天，大家一起庆祝。"),
        fragments=("傍晚聊了新地图",),
        bridge=(PromptLine("小红", "新地图好难", "18:30"),),
        recent=(
            PromptLine("小红", "今天好冷", "19:58"),
            PromptLine("大肥鱼", "咕噜，冻成冰鱼了", "19:59", is_bot=True),
        ),
    )


def test_minimal_prompt_snapshot() -> None:
    prompt = build_chat_prompt(minimal())
    check_snapshot("chat_minimal", render([(m.role, m.content or "") for m in prompt.messages]))
    assert [name for name, _ in prompt.blocks] == ["persona", "message"]


def test_full_prompt_snapshot() -> None:
    prompt = build_chat_prompt(full())
    check_snapshot("chat_full", render([(m.role, m.content or "") for m in prompt.messages]))


def test_blocks_follow_the_spec_order() -> None:
    prompt = build_chat_prompt(full())
    assert [name for name, _ in prompt.blocks] == [
        "persona",
        "states",
        "cards",
        "timeline",
        "diaries",
        "memories",
        "people",
        "followups",
        "quotes",
        "background",
        "fragments",
        "recent",
        "message",
    ]
    system = prompt.messages[0].content or ""
    positions = [system.index(body) for name, body in prompt.blocks if name != "message"]
    assert positions == sorted(positions)
    assert prompt.messages[-1].role == "user"


def test_quotes_are_labelled_as_quotes_with_sender_time_and_id() -> None:
    prompt = build_chat_prompt(full())
    blocks = dict(prompt.blocks)
    assert blocks["quotes"] == "〔原话 消息#812〕[18:02] 小红：我下周三去杭州面试"
    system = prompt.messages[0].content or ""
    assert f"## {QUOTES_HEADING}\n{blocks['quotes']}" in system
    assert "不是你记得的事实" in QUOTES_HEADING
    assert prompt.quote_ids == (812,)
    assert "#812〔" not in blocks["memories"]  # never shown as a memory


def test_quotes_over_budget_drop_whole_quotes_and_their_ids() -> None:
    many = tuple(PromptQuote(i, "小红", "18:02", "很长的一句话" * 20) for i in range(1, 4))
    prompt = build_chat_prompt(replace(minimal(), quotes=many), PromptBudget(quotes=90))
    shown = dict(prompt.blocks)["quotes"].splitlines()
    assert len(shown) == len(prompt.quote_ids) < 3
    assert all(f"消息#{i}〕" in line for i, line in zip(prompt.quote_ids, shown, strict=True))


def test_prompt_teaches_the_exact_marker_syntax() -> None:
    system = build_chat_prompt(minimal()).messages[0].content or ""
    assert "[[m:12]]" in system


def test_empty_card_is_left_out_and_a_related_memory_is_never_a_fact() -> None:
    system = build_chat_prompt(full()).messages[0].content or ""
    assert "【目标】" not in system
    # a related memory says so first, and carries recall's label in its reason
    [line] = [ln for ln in system.splitlines() if ln.startswith("#5〔")]
    assert line.startswith("#5〔仅供参考｜")
    assert RELATED_LABEL in line
    assert line.endswith("〕阿明养了一只猫")


def test_every_memory_line_names_its_band_and_the_rules_say_what_they_mean() -> None:
    prompt = build_chat_prompt(full())
    system = prompt.messages[0].content or ""
    lines = [ln for ln in system.splitlines() if re.match(r"#\d+〔", ln)]
    assert len(lines) == 5
    for line in lines:
        band = line.split("〔", 1)[1].split("｜", 1)[0]
        assert band in ("确定", "仅供参考")
    assert [ln.startswith("#5〔") for ln in lines if "〔仅供参考｜" in ln] == [True]
    assert "绝不能当成事实" in system
    assert "就说自己不知道或记不清，或者反问" in system


def test_contradicting_pair_is_shown_together() -> None:
    prompt = build_chat_prompt(full())
    assert prompt.memory_ids == (3, 7, 5, 9, 12, 21)  # the follow-up last
    system = prompt.messages[0].content or ""
    assert system.index("#3") < system.index("#7") < system.index("#5")
    assert "#3 和 #7 互相矛盾" in system


def test_background_diary_is_labelled_as_not_recent() -> None:
    system = build_chat_prompt(full()).messages[0].content or ""
    assert "较早日期（2026-10-01）的背景，不代表最近发生" in system


def test_slow_blocks_form_a_stable_prefix() -> None:
    a = full()
    b = ChatPromptInput(**{**_fields(a), "now": "2026-11-20 21:13 周五", "memories": ()})
    sa = build_chat_prompt(a).messages[0].content or ""
    sb = build_chat_prompt(b).messages[0].content or ""
    prefix = sa[: sa.index("现在是")]
    assert sb.startswith(prefix)
    assert "最近几天的小传" in prefix


def _fields(data: ChatPromptInput) -> dict[str, object]:
    return {name: getattr(data, name) for name in data.__dataclass_fields__}


def test_recent_messages_keep_the_newest_within_budget() -> None:
    recent = tuple(PromptLine("阿明", f"第{i}条消息内容", f"19:{i:02d}") for i in range(60))
    data = ChatPromptInput(**{**_fields(minimal()), "recent": recent})
    prompt = build_chat_prompt(data, PromptBudget(recent=60))
    body = dict(prompt.blocks)["recent"]
    assert "第59条" in body
    assert "第0条" not in body
    assert estimate_tokens(body) <= 60


def test_memories_over_budget_drop_whole_items_in_recall_order() -> None:
    memories = tuple(PromptMemory(i, "很长的记忆内容" * 5, "lexical") for i in range(1, 6))
    data = ChatPromptInput(**{**_fields(minimal()), "memories": memories})
    prompt = build_chat_prompt(data, PromptBudget(memories=120))
    assert 0 < len(prompt.memory_ids) < 5
    assert prompt.memory_ids == tuple(range(1, len(prompt.memory_ids) + 1))
    assert estimate_tokens(dict(prompt.blocks)["memories"]) <= 120


@given(st.lists(st.text(min_size=1, max_size=80), max_size=40), st.integers(1, 500))
def test_take_within_never_exceeds_the_budget(lines: list[str], budget: int) -> None:
    kept = take_within(lines, budget)
    assert sum(estimate_tokens(line) + 1 for line in kept) <= budget
    assert kept == lines[: len(kept)]


@given(st.text(max_size=500), st.integers(0, 200))
def test_truncate_to_fits_and_is_a_prefix(text: str, budget: int) -> None:
    cut = truncate_to(text, budget)
    assert estimate_tokens(cut) <= max(budget, 0) or cut == ""
    assert text.startswith(cut.removesuffix("…").rstrip()) or cut == text


def test_token_estimate_counts_chinese_per_character() -> None:
    assert estimate_tokens("撤离率") == 3
    assert estimate_tokens("abcdefgh") == 2


def test_a_memory_about_a_member_says_whose_word_it_is() -> None:
    prompt = build_chat_prompt(full())
    system = prompt.messages[0].content or ""
    [hearsay] = [ln for ln in system.splitlines() if ln.startswith("#12〔")]
    assert hearsay.endswith("〕（阿哲｜小周说）阿哲下个月搬去深圳")
    own = PromptMemory(4, "我下周考试", "lexical", "阿明", said="本人说")
    line = dict(build_chat_prompt(replace(minimal(), memories=(own,))).blocks)["memories"]
    assert line.endswith("〕（阿明｜本人说）我下周考试")
    assert "不要当成确定的事实讲出来" in system  # the house rule on hearsay


def test_people_come_after_the_memories_never_in_the_cached_prefix() -> None:
    prompt = build_chat_prompt(full())
    system = prompt.messages[0].content or ""
    people = dict(prompt.blocks)["people"]
    assert people.splitlines() == [
        "【阿明】爱吃辣；这周在杭州出差",
        "【阿哲】（小周说）下个月搬去深圳",
    ]
    assert system.index("现在是 ") < system.index("## 想起的记忆") < system.index(people)
    assert system.index("## 记忆卡片") < system.index("现在是 ")


def test_people_keep_to_their_own_budget() -> None:
    many = tuple((f"群友{i}", "很长的一行人物卡片内容" * 10) for i in range(6))
    prompt = build_chat_prompt(replace(minimal(), people=many), PromptBudget(people=120))
    shown = dict(prompt.blocks)["people"]
    assert 0 < len(shown.splitlines()) < 6
    assert sum(estimate_tokens(line) + 1 for line in shown.splitlines()) <= 120
    assert shown.startswith("【群友0】")  # the asker's card comes first and is kept first
    none = build_chat_prompt(replace(minimal(), people=many), PromptBudget(people=0))
    assert "people" not in dict(none.blocks)


def test_a_followup_is_offered_with_its_marker_and_counts_as_injected() -> None:
    prompt = build_chat_prompt(full())
    system = prompt.messages[0].content or ""
    assert f"## {FOLLOWUPS_HEADING}\n#21 阿明：阿明11月18日考四级（2026-11-18）" in system
    assert "[[m:21]]" in system
    assert 21 in prompt.memory_ids  # a citation of it is kept, not ignored
    none = build_chat_prompt(full(), PromptBudget(followups=0))
    assert FOLLOWUPS_HEADING not in (none.messages[0].content or "")
    assert 21 not in none.memory_ids
    absent = build_chat_prompt(replace(full(), followup=None))
    assert [name for name, _ in absent.blocks].count("followups") == 0
