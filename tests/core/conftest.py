from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_core import FakeClock, Settings, Yuji
from memory_core.vectors import FakeEmbedder
from tests.conftest import copy_head_database

from .relevance_models import FAKE_MODEL, LEXICAL_MODEL


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 11, 20, 12, 0, tzinfo=UTC))


@pytest.fixture
def settings(tmp_path: Path, head_database: Path) -> Settings:
    """A data folder whose database is already at the head revision (tests/conftest.py)."""
    return Settings(data_dir=copy_head_database(head_database, tmp_path / "data"))


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
