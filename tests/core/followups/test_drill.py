"""The follow-ups drill (benchmarks/followups_drill.py), two weeks of it: plans told,
cancelled, moved and forgotten in three chats, wakes and the unprompted job on a fake
clock; whatever was asked, no rule was broken (recounted from the drill's own log)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.followups_drill import run


async def test_two_weeks_break_no_rule(tmp_path: Path) -> None:
    result = await run(14, 7, tmp_path)
    assert set(result["violations"].values()) == {0}, result["violations"]
    assert sum(result["asked_unprompted"].values()) > 0
    assert "group:3" not in result["asked_unprompted"]
    assert result["asked_in_passing"] > 0
    assert result["followups_became_due"] > 0
