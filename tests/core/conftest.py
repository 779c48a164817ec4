from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_core import FakeClock, Settings, Yuji
from tests import backends

from .cores import open_core


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 11, 20, 12, 0, tzinfo=UTC))


@pytest.fixture
def settings(tmp_path: Path, database_url: str, backend: str) -> Settings:
    """A data folder and a database already at the head revision, on each backend
    (tests/conftest.py): SQLite's file is in the folder, as the default puts it; on
    PostgreSQL backups use the server's own pg_dump (PATH may hold an older one)."""
    data_dir = tmp_path / "data"
    data_dir.mkdir(exist_ok=True)
    if backend == "sqlite":
        return Settings(data_dir=data_dir)
    pg_dump = str(backends.client_bin(backend) / "pg_dump")
    return Settings(data_dir=data_dir, database_url=database_url, pg_dump=pg_dump)


@pytest.fixture
async def core(settings: Settings, clock: FakeClock) -> AsyncIterator[Yuji]:
    """Dense retrieval on and the hand-made relevance models (cores.py)."""
    opened = await open_core(settings, clock)
    try:
        yield opened
    finally:
        await opened.close()
