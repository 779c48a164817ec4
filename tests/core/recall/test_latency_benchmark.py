"""benchmarks/recall_latency.py measures a filled chat: a temporary store is filled
(not taken for a kept one), a kept one is reused, and `--pending` leaves its messages
unconsolidated, where recall quotes them."""

from __future__ import annotations

from pathlib import Path

from benchmarks import recall_latency as bench


async def test_a_temporary_store_is_filled() -> None:
    # Questions are cut from the chat's memories: an empty store would answer none.
    r = await bench.measure(60, 12, "off")
    assert r["answered"] > 0.5
    assert r["quoted"] == 0


async def test_a_kept_store_is_reused_and_pending_messages_are_quoted(tmp_path: Path) -> None:
    first = await bench.measure(60, 12, "off", keep=tmp_path, pending=40)
    assert (tmp_path / "60-off-pending40").is_dir()
    again = await bench.measure(60, 12, "off", keep=tmp_path, pending=40)
    assert again["answered"] == first["answered"] > 0.5
    assert first["quoted"] > 0
