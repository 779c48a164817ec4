"""The ingest fault suite in its short form (full size: benchmarks/faults/run_ingest.py).

Same scenarios, same code, smaller sizes; no timing assertions (the figures live in
the reliability section of docs/benchmarks.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.faults.ingest_scenarios import flood, fuzz, sigterm

pytestmark = [pytest.mark.e2e, pytest.mark.faults]


async def test_fuzzed_frames_cost_no_valid_message(tmp_path: Path) -> None:
    figures = await fuzz(tmp_path, fuzzed=300, valid_every=5, seed=3)
    assert figures.unarchived == []
    assert figures.valid_archived == figures.valid == 60
    assert figures.reconnects >= 1  # the oversized frame closed a socket; backfill refilled it
    assert figures.alive
    # Throttled: without it, each bad frame logged a traceback (~600 bytes each).
    assert figures.log_bytes < 100 * figures.fuzzed


async def test_sigterm_with_a_backlog_archives_everything_and_exits_0(tmp_path: Path) -> None:
    figures = await sigterm(tmp_path, messages=1000)
    assert figures.archived == figures.sent == 1000
    assert figures.exit_code == 0


async def test_a_flood_is_archived_whole(tmp_path: Path) -> None:
    figures = await flood(tmp_path, burst=1000, rate=200, seconds=1.0)
    assert figures.burst_archived == figures.burst == 1000
    assert figures.paced_archived == figures.paced == 200
    assert figures.exit_code == 0
