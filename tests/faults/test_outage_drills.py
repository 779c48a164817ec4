"""The database goes away under two real bot processes, in its short form (full
size: benchmarks/faults/run_outage.py): the PostgreSQL 18 postmaster is SIGKILLed
and started again on the same data directory a few seconds later. Every message
archived once, both processes up, one leader, one alert each way for the deployment.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.faults.outage_scenarios import pg_restart

pytestmark = [pytest.mark.e2e, pytest.mark.faults]


async def test_a_postmaster_killed_and_restarted_loses_and_doubles_nothing(
    tmp_path: Path,
) -> None:
    figures = await pg_restart(
        tmp_path, processes=2, rate=50, seconds=6.0, kill_at_s=2.0, outage_s=3.0
    )
    for group, (sent, archived) in figures.per_group.items():
        assert archived == sent, (group, figures.per_group)
    assert figures.archived == figures.sent == 600
    assert figures.duplicates == 0
    assert figures.alive
    assert figures.leaders == 1
    assert (figures.down_alerts, figures.up_alerts) == (1, 1), figures.alerts
    assert len(figures.alerts) == 2, figures.alerts  # no takeover alert on top
