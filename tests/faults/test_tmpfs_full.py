"""A real full disk in its short form (full size: benchmarks/faults/run_outage.py):
the bot's data folder on a 64 MB tmpfs, filled with a file while messages arrive,
then freed. Every message archived once, the bot up, one alert each way,
consolidation caught up afterwards. Needs root to mount (CI runs as root)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.backends import in_ci

from .tmpfs_full import FULL_KEY, can_mount, disk_full

pytestmark = [pytest.mark.e2e, pytest.mark.faults]


async def test_a_full_disk_holds_the_messages_and_writes_each_once_when_space_returns(
    tmp_path: Path,
) -> None:
    if not can_mount():
        if in_ci():
            pytest.fail("mounting a tmpfs needs root, and CI runs as root", pytrace=False)
        pytest.skip("mounting a tmpfs needs root")
    figures = await disk_full(tmp_path, size_mb=64, batch=100)
    assert figures.archived_while_full < 200  # the disk was full for the writer
    assert figures.archived == figures.sent == 300  # then every one of them
    assert figures.duplicates == 0
    assert figures.alive
    assert figures.alert_count(FULL_KEY, recovered=False) == 1
    assert figures.alert_count(FULL_KEY, recovered=True) == 1
    assert len(figures.alerts) == 2, figures.alerts  # no backup or consolidation alert
    assert figures.acked_all  # consolidation went on by itself
