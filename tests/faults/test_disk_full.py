"""SQLite full: a clear error and an alert, no corruption, and writes work again by
themselves once there is room, with a recovery message."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.errors import StorageFull

from .disk_full import fill_and_heal


async def test_a_full_database_alerts_keeps_what_it_stored_and_heals(tmp_path: Path) -> None:
    report = await fill_and_heal(tmp_path / "data")

    assert report.refused > 0, "the cap never bit"
    assert report.first_error.startswith("database full: database or disk is full")
    assert report.alerts == ("storage-full",)  # once, not once per refused row
    assert report.integrity_while_full == "ok"
    assert report.archived_while_full == report.stored_before + report.stored_while_full
    assert report.healed_id is not None
    assert report.recoveries == ("storage-full",)
    assert report.integrity_after == "ok"


def test_storage_full_reads_as_one_line() -> None:
    with pytest.raises(StorageFull, match=r"^database full: no room"):
        raise StorageFull("no room")
