from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_core import FakeClock, Settings, Yuji
from memory_core.vectors import FakeEmbedder
from tests import backends

from .relevance_models import FAKE_MODEL, LEXICAL_MODEL


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
    """Dense retrieval on (FakeEmbedder; no index until a test builds one) and the
    hand-made relevance models of relevance_models.py."""
    opened = await Yuji.open(
        settings,
        clock=clock,
        embedder=FakeEmbedder(),
        relevance=FAKE_MODEL,
        lexical_relevance=LEXICAL_MODEL,
    )
    try:
        yield opened
    finally:
        await opened.close()
