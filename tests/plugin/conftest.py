"""nonebug setup for every plugin test.

- `pytest_configure` stashes the `nonebot.init` keywords (nonebug 0.4 reads them):
  the FastAPI driver, the persona nickname, `/` commands, a superuser, and a
  session-wide throwaway `yuji_data_dir`, so the startup hook never touches `data/`.
  It also calls `nonebot.init` with them right away, registers the OneBot v11
  adapter and loads `nonebot_plugin_yuji` (nonebug's own later `init` is then a no-op and
  its matcher provider copies ours). So test modules may import `nonebot_plugin_yuji.*` at
  the top, and the plugin's startup hook runs in nonebug's lifespan.
- `yuji_core` (autouse) opens a fresh core on the test's own `tmp_path`, installs it
  as `nonebot_plugin_yuji.runtime.core()` for the test, and closes it afterwards, so every
  test starts from an empty database. Override the small fixtures it is built from
  in a test module to change it: `yuji_settings`, `yuji_clock`, `yuji_fetcher`,
  `yuji_open_kwargs` (e.g. add `llm=ScriptedLLM(...)`).

Events for tests are built with `tests.plugin.factories`.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nonebot
import pytest
from nonebot.adapters.onebot.v11 import Adapter as OneBotV11Adapter
from nonebug import NONEBOT_INIT_KWARGS

from memory_core import FakeClock, FakeFetcher, Settings, Yuji
from tests.conftest import copy_head_database
from tests.core.relevance_models import FAKE_MODEL, LEXICAL_MODEL

SUPERUSER = "10000"
NICKNAME = "大肥鱼"
_SESSION_DATA = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="yuji-nonebug-"))
    config.stash[_SESSION_DATA] = data_dir
    kwargs: dict[str, Any] = {
        "driver": "~fastapi",
        "nickname": [NICKNAME],
        "command_start": ["/"],
        "superusers": [SUPERUSER],
        "yuji_data_dir": str(data_dir),
        "log_level": "INFO",
    }
    config.stash[NONEBOT_INIT_KWARGS] = kwargs
    nonebot.init(**kwargs)
    driver = nonebot.get_driver()
    if OneBotV11Adapter.get_name() not in driver._adapters:  # pyright: ignore[reportPrivateUsage]
        driver.register_adapter(OneBotV11Adapter)
    nonebot.load_plugin("nonebot_plugin_yuji")


def pytest_unconfigure(config: pytest.Config) -> None:
    data_dir = config.stash.get(_SESSION_DATA, None)
    if data_dir is not None:
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def yuji_settings(tmp_path: Path, head_database: Path) -> Settings:
    # No automatic backfill: its catch-up on each bot connect would make API calls
    # the tests' scripted call lists do not expect. The database starts at the head
    # revision (tests/conftest.py).
    data_dir = copy_head_database(head_database, tmp_path / "yuji-data")
    return Settings(data_dir=data_dir, nicknames=(NICKNAME,), backfill_interval_s=0)


@pytest.fixture
def yuji_clock() -> FakeClock:
    return FakeClock(datetime(2026, 11, 20, 12, 0, tzinfo=UTC))


@pytest.fixture
def yuji_fetcher() -> FakeFetcher:
    return FakeFetcher()


@pytest.fixture
def yuji_open_kwargs(yuji_clock: FakeClock, yuji_fetcher: FakeFetcher) -> dict[str, Any]:
    return {"clock": yuji_clock, "fetcher": yuji_fetcher}


@pytest.fixture(autouse=True)
async def yuji_core(
    yuji_settings: Settings, yuji_open_kwargs: dict[str, Any]
) -> AsyncIterator[Yuji]:
    from nonebot_plugin_yuji import runtime

    try:
        previous: Yuji | None = runtime.core()
    except RuntimeError:
        previous = None
    # The hand-made relevance models of tests/core unless a test brings its own: plugin
    # tests check the glue, not the shipped weights.
    hand = {"relevance": FAKE_MODEL, "lexical_relevance": LEXICAL_MODEL}
    core = await Yuji.open(yuji_settings, **{**hand, **yuji_open_kwargs})
    await core.deployment.leader.step()  # a lone bot leads from its start
    runtime.set_core(core)
    try:
        yield core
    finally:
        runtime.set_core(previous)
        await core.close()
