"""The follow-ups dev set (benchmarks/data/followups-dev.json) replayed on a real
SQLite store: the date logic is exact on it (every check, every pair), and the one
plan whose model-written date disagrees with its words is refused, and no other."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.followups_dev import DATA, run
from memory_core import Settings


async def test_the_due_list_is_exact_on_the_dev_set(tmp_path: Path) -> None:
    data = json.loads(DATA.read_text("utf-8"))
    settings = Settings(
        data_dir=tmp_path, timezone=data["timezone"], followup_window_days=data["window_days"]
    )
    result = await run(data, settings)
    assert result["misses"] == []
    assert (result["exact"], result["checks"]) == (len(data["checks"]), len(data["checks"]))
    assert result["due_pairs"] == sum(len(c["due"]) for c in data["checks"]) > 0
    assert result["refused_found"] == result["refused_expected"] == len(data["refused"]) > 0
    assert result["refused_other"] == []
