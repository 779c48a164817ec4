"""The kill suite's short form: a SIGKILL in each workload (the full run of 50 is
benchmarks/faults/run.py)."""

from __future__ import annotations

from pathlib import Path

from .kills import WORKLOADS, run_kills


async def test_sigkill_in_every_workload_leaves_a_sound_database(tmp_path: Path) -> None:
    cycles = await run_kills(tmp_path / "data", kills=len(WORKLOADS), max_delay_s=1.5)

    assert [c.workload for c in cycles] == list(WORKLOADS)
    for cycle in cycles:
        assert cycle.problems == [], cycle
        assert cycle.ok, cycle
        assert cycle.resent > 0  # something was archived, and resent
