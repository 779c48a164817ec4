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
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from memory_core import Settings, Yuji
from tests import backends

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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backends",
        default=",".join(backends.BACKENDS),
        help="comma-separated databases the storage tests run on (tests/backends.py): "
        + ", ".join(backends.BACKENDS),
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only(reason): the test is about SQLite itself (its file, its locks)"
    )
    config.addinivalue_line(
        "markers", "pg_only(reason): the test is about PostgreSQL itself (its tools, its roles)"
    )
    config.addinivalue_line(
        "markers",
        "only_on(*backends, reason=...): the test needs what only these backends have "
        "(pgvector: pg18); it is not run, rather than skipped, on the others",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames:
        return
    chosen = [b for b in str(metafunc.config.getoption("backends")).split(",") if b]
    unknown = set(chosen) - set(backends.BACKENDS)
    if unknown:
        raise pytest.UsageError(f"--backends: unknown {sorted(unknown)}")
    if metafunc.definition.get_closest_marker("sqlite_only") is not None:
        chosen = [b for b in chosen if b == "sqlite"]
    if metafunc.definition.get_closest_marker("pg_only") is not None:
        chosen = [b for b in chosen if b != "sqlite"]
    only = metafunc.definition.get_closest_marker("only_on")
    if only is not None:
        chosen = [b for b in chosen if b in only.args]
    metafunc.parametrize("backend", chosen, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Servers:
    """The PostgreSQL servers of this worker, each started on first use, with a
    database migrated to head that every test's database is copied from."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.started: dict[str, backends.Server] = {}
        self.failed: dict[str, str] = {}

    async def server(self, name: str) -> backends.Server:
        if name in self.failed:
            backends.unavailable(name, self.failed[name])
        if name not in self.started:
            start = backends.start_pg18 if name == "pg18" else backends.start_pg15
            try:
                server = start()
                await backends.admin(server, f"CREATE DATABASE {backends.HEAD}")
                core = await Yuji.open(
                    Settings(
                        data_dir=self.root / f"{name}-head",
                        database_url=server.url(backends.HEAD),
                        vector_mode="off",
                    )
                )
                await core.close()
            except Exception as exc:  # said in one line, or fails in CI
                self.failed[name] = f"{type(exc).__name__}: {exc}".splitlines()[0]
                backends.unavailable(name, self.failed[name])
                raise
            self.started[name] = server
        return self.started[name]

    async def fresh(self, name: str) -> tuple[backends.Server, str]:
        server = await self.server(name)
        database = backends.database_name()
        await backends.admin(server, f"CREATE DATABASE {database} TEMPLATE {backends.HEAD}")
        return server, database

    async def empty(self, name: str) -> tuple[backends.Server, str]:
        """A database with nothing in it (no migration ran), on server `name`."""
        server = await self.server(name)
        database = backends.database_name()
        await backends.admin(server, f"CREATE DATABASE {database}")
        return server, database

    def stop(self) -> None:
        for server in self.started.values():
            backends.stop(server)


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    started = Servers(tmp_path_factory.mktemp("servers"))
    yield started
    started.stop()


@pytest.fixture
async def database_url(
    backend: str, servers: Servers, head_database: Path, tmp_path: Path
) -> AsyncIterator[str]:
    """A database at the head revision on `backend`, for this test alone: a copy of the
    worker's head SQLite file, or a fresh PostgreSQL database dropped afterwards."""
    if backend == "sqlite":
        data_dir = copy_head_database(head_database, tmp_path / "data")
        yield f"sqlite+aiosqlite:///{Settings(data_dir=data_dir).database_path}"
        return
    server, database = await servers.fresh(backend)
    yield server.url(database)
    await backends.admin(server, f"DROP DATABASE {database} WITH (FORCE)")


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
