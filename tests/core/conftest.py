from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_core import FakeClock, Settings, Yuji


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 11, 20, 12, 0, tzinfo=UTC))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data")


@pytest.fixture
async def core(settings: Settings, clock: FakeClock) -> AsyncIterator[Yuji]:
    opened = await Yuji.open(settings, clock=clock)
    try:
        yield opened
    finally:
        await opened.close()
