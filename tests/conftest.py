"""Suite-wide: the longest tests are handed out first, and a database at the head
revision is made once per worker for the core fixtures to copy.

The suite runs on pytest-xdist (pyproject's addopts). Its scheduler gives the workers
tests in collection order, so a test of minutes collected in the middle would start
late and finish the run alone while the other worker idles. RUN_FIRST names the
files whose tests take far longer than the rest (`--durations` shows them); their
tests go to the front, everything else keeps its order. A file missing from the list
only costs wall-clock time, never a test.

`head_database` is a SQLite file that `Yuji.open` migrated to the head revision, once
per worker; `copy_head_database` puts it where a fixture's core will open it. Running
the migrations on an empty file takes a quarter of a second or more, copying the
file a millisecond, and the core opens on the same schema either way (its open then
finds nothing to migrate). Tests of the migrations or of a first start make their own
database and never see the copy.

Hypothesis runs without its per-example deadline (200 ms by default): two workers on
two cores, beside whatever else the machine runs, make an example's time a measure of
the load, not of the code; a property that fails still fails, and a hung one meets
pytest-timeout. A test's own `@settings(deadline=...)` still applies.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from memory_core import Settings, Yuji

hypothesis_settings.register_profile("suite", deadline=None)
hypothesis_settings.load_profile("suite")

RUN_FIRST = (
    "tests/core/recall/test_training.py",  # featurises and fits the reproduction check
    "tests/e2e/test_nightly_e2e.py",
    "tests/core/vectors/test_cli_embed.py",
    "tests/faults/test_kills.py",
    "tests/core/consolidation/test_crash_safety.py",
    "tests/core/recall/test_no_cross_chat.py",
)


def _rank(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return RUN_FIRST.index(path) if path in RUN_FIRST else len(RUN_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_rank)  # stable: the rest keep their order


@pytest.fixture(scope="session")
async def head_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("head-database") / "data"
    core = await Yuji.open(Settings(data_dir=data, vector_mode="off"))
    await core.close()
    path = Settings(data_dir=data).database_path
    with sqlite3.connect(path) as conn:  # everything in the main file: no -wal to copy
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def copy_head_database(head: Path, data_dir: Path) -> Path:
    """`data_dir` made, with the head database in it; `data_dir`."""
    data_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(head, Settings(data_dir=data_dir).database_path)
    return data_dir
