"""Opening the core: a start that fails part-way closes what it had opened."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memory_core import Settings, Yuji


async def test_an_unreadable_console_override_fails_the_start_and_closes_the_core(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(data_dir=tmp_path, vector_mode="off")
    core = await Yuji.open(settings)
    await core.close()
    with sqlite3.connect(settings.database_path) as conn:  # an operator's hand edit
        conn.execute(
            "INSERT INTO console_overrides (name, value, updated_at) "
            "VALUES ('recall_limit', '{oops', '2026-12-01 00:00:00')"
        )
    closed: list[Yuji] = []
    close = Yuji.close

    async def spy(self: Yuji) -> None:
        closed.append(self)
        await close(self)

    monkeypatch.setattr(Yuji, "close", spy)
    with pytest.raises(json.JSONDecodeError):
        await Yuji.open(settings)
    assert len(closed) == 1
    with sqlite3.connect(settings.database_path) as conn:  # nothing half-written stays
        assert conn.execute("SELECT count(*) FROM console_overrides").fetchone() == (1,)
