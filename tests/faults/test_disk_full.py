"""SQLite full (`max_page_count`, kept beside the real full file system of
test_tmpfs_full.py: it runs without root, in a second): an alert, no corruption, the
messages offered meanwhile held in the queue, and every one written once by itself
once there is room, with a recovery message."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.errors import StorageFull

from .disk_full import fill_and_heal


async def test_a_full_database_alerts_keeps_what_it_stored_and_heals(tmp_path: Path) -> None:
    report = await fill_and_heal(tmp_path / "data")

    assert report.held_while_full > 0, "the cap never bit"
    assert "database full: database or disk is full" in report.first_error
    assert report.alerts == ("storage-full",)  # once, not once per refused row
    assert report.integrity_while_full == "ok"
    assert report.archived_while_full + report.held_while_full == 5 + 40
    assert report.archived_after == report.distinct_after == 5 + 40  # each once
    assert report.dropped == 0
    assert report.recoveries == ("storage-full",)
    assert report.integrity_after == "ok"


def test_storage_full_reads_as_one_line() -> None:
    with pytest.raises(StorageFull, match=r"^database full: no room"):
        raise StorageFull("no room")
