"""The consolidation prompt and tool schemas: snapshots pin the text; pure helpers.

Regenerate snapshots after an intended change with YUJI_UPDATE_SNAPSHOTS=1.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.consolidation.tools import parse_instant
from memory_core.prompts.consolidation import (
    TOOLS,
    AcknowledgeArgs,
    Line,
    batch_prompt,
    clip,
    quotes_bot_text,
    render_line,
    stamp,
    system_prompt,
    tool_specs,
)

SNAPSHOTS = Path(__file__).parent / "snapshots"
SHANGHAI = ZoneInfo("Asia/Shanghai")
T = datetime(2026, 11, 20, 12, 5, tzinfo=UTC)


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("YUJI_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, "utf-8")
    assert text == path.read_text("utf-8")


def test_prompt_snapshot() -> None:
    lines = [
        Line(1, T, "张三(10001)", "明天我去杭州出差\n三天"),
        Line(2, T, "大肥鱼(999)", "一路顺风！", is_bot=True),
        Line(3, T, "李四(10002)", "一路顺风！哈哈", quotes_bot=True),
        Line(4, T, "李四(10002)", "谢谢", reply_to_id=1),
        Line(5, T, "王五(10003)", "鱼鱼你说的对", quoted_bot_text="你们要早点睡"),
    ]
    text = "=== system\n" + system_prompt("大肥鱼") + "\n=== user\n"
    text += batch_prompt("group:42", "TOKEN", lines, SHANGHAI, first_id=1, last_id=5)
    check_snapshot("consolidation_prompt", text)


def test_tool_schema_snapshot() -> None:
    specs = [
        {"name": s.name, "description": s.description, "parameters": s.parameters}
        for s in tool_specs()
    ]
    check_snapshot("consolidation_tools", json.dumps(specs, ensure_ascii=False, indent=1))
    assert [s.name for s in tool_specs()] == [t.name for t in TOOLS]
    assert all("token" in s.parameters["required"] for s in tool_specs())


def test_render_line_marks_the_bot_and_local_time() -> None:
    bot = render_line(Line(7, T, "大肥鱼(9)", "我是鱼", is_bot=True), SHANGHAI)
    assert bot == "#7 [2026-11-20 周五 20:05] 【机器人】大肥鱼(9)：我是鱼"
    quoted = render_line(Line(8, T, "甲", "对", quoted_bot_text="你喜欢猫吗"), SHANGHAI)
    assert quoted.endswith("↩回复【机器人】：「你喜欢猫吗」")


def test_the_stamp_carries_the_local_year_and_weekday() -> None:
    sunday_evening_utc = datetime(2026, 12, 6, 17, 30, tzinfo=UTC)  # Monday 01:30 in Shanghai
    assert stamp(sunday_evening_utc, SHANGHAI) == "2026-12-07 周一 01:30"
    assert stamp(sunday_evening_utc, ZoneInfo("UTC")) == "2026-12-06 周日 17:30"
    assert stamp(datetime(2026, 12, 31, 16, 0, tzinfo=UTC), SHANGHAI) == "2027-01-01 周五 00:00"


@settings(deadline=None)  # timing belongs to benchmarks, not to this property
@given(st.text(max_size=300), st.integers(min_value=1, max_value=200))
def test_clip_never_exceeds_the_cap_plus_its_note(text: str, cap: int) -> None:
    clipped = clip(text, cap)
    if len(text) <= cap:
        assert clipped == text
    else:
        assert clipped.startswith(text[:cap])
        assert f"{len(text) - cap} 字" in clipped


def test_quotes_bot_text() -> None:
    assert quotes_bot_text("哈哈 张三最喜欢吃榴莲了 是吗", ["张三最喜欢吃榴莲了"])
    assert not quotes_bot_text("好的", ["好的"])  # too short to tell
    assert not quotes_bot_text("我最喜欢吃榴莲", ["张三最喜欢吃苹果了"])


def test_acknowledge_needs_a_summary_only_when_extracted() -> None:
    assert AcknowledgeArgs(token="t", outcome="nothing").summary == ""
    with pytest.raises(ValueError, match="summary"):
        AcknowledgeArgs(token="t", outcome="extracted")


def test_parse_instant_local_without_offset() -> None:
    assert parse_instant("2026-11-21", SHANGHAI) == datetime(2026, 11, 20, 16, 0, tzinfo=UTC)
    assert parse_instant("2026-11-21T08:00:00Z", SHANGHAI) == datetime(
        2026, 11, 21, 8, 0, tzinfo=UTC
    )
    with pytest.raises(ValueError, match="isoformat"):
        parse_instant("明天", SHANGHAI)
