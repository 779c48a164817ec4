"""The follow-ups drill (benchmarks/followups_drill.py), two weeks of it: plans told,
cancelled, moved and forgotten in three chats, wakes and the unprompted job on a fake
clock; whatever was asked, no rule was broken and no follow-up was lost where a rule
allowed asking it (recounted from the drill's own log), and every follow-up that came
due is accounted for."""

from __future__ import annotations

from pathlib import Path

from benchmarks.followups_drill import run


async def test_two_weeks_break_no_rule(tmp_path: Path) -> None:
    result = await run(14, 7, tmp_path)
    assert set(result["violations"].values()) == {0}, result["violations"]
    outcomes, by_chat = result["outcomes"], result["asked_by_chat"]
    assert outcomes["asked unprompted"] > 0
    assert outcomes["asked in passing"] > 0
    assert "group:3 unprompted" not in by_chat
    assert sum(outcomes.values()) == result["followups_became_due"] > 0
