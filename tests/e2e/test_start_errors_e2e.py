"""Issue 33, items 4 and 5: every way the store cannot be opened is one line and exit
2, from `python bot.py` and from the `yuji` command alike, naming the fix, before
anything is made; the commands that only read refuse a store that is not there; a
PORT another program holds is refused before the data folder is made. Against real
situations: a port nothing listens on, a real server refusing a wrong password, a
real server without the database, a URL of another driver, an interpreter where
asyncpg cannot be imported."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import backends
from tests.conftest import Servers

from .harness import ROOT, BotProcess, free_port, pg_query
from .test_bot_start_e2e import refused

pytestmark = pytest.mark.e2e

PASSWORD = "right-one"


@pytest.fixture(scope="module")
def password_server() -> Iterator[tuple[backends.Server, int]]:
    """A PostgreSQL server that checks passwords (scram-sha-256), on 127.0.0.1."""
    port = free_port()
    try:
        server = backends.start_pg15(password=PASSWORD, port=port)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
        backends.unavailable("pg15", str(exc).splitlines()[0])
        raise
    yield server, port
    backends.stop(server)


def cli(tmp_path: Path, env: dict[str, str], *argv: str) -> str:
    """`yuji ARGV` in an empty folder; its one line (exit 2 asserted)."""
    cwd = tmp_path / "cli-cwd"
    cwd.mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "memory_core.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert lines[0].startswith(f"yuji {argv[0]}: "), output
    return lines[0]


def both(tmp_path: Path, env: dict[str, str]) -> list[str]:
    """The refusal of bot.py and of `yuji status` (which reads) and `yuji consolidate`
    (which writes) for one configuration; nothing made by any of them."""
    bot = BotProcess(tmp_path / "bot", env=env)
    lines = [refused(bot).removeprefix("bot.py: ")]
    for argv in (["status"], ["consolidate"]):
        line = cli(tmp_path, bot.env, *argv)
        lines.append(line.removeprefix(f"yuji {argv[0]}: "))
    assert not bot.data_dir.exists()
    return lines


def test_a_server_that_is_not_running(tmp_path: Path) -> None:
    port = free_port()  # nothing listens on it
    url = f"postgresql+asyncpg://yuji:{PASSWORD}@127.0.0.1:{port}/yuji"
    for line in both(tmp_path, {"YUJI_DATABASE_URL": url}):
        assert line == (
            f"cannot reach PostgreSQL at 127.0.0.1:{port}/yuji (nothing answers there): "
            "start the server, or fix the host and port in YUJI_DATABASE_URL"
        )
        assert PASSWORD not in line


def test_a_wrong_password(tmp_path: Path, password_server: tuple[backends.Server, int]) -> None:
    _, port = password_server
    url = f"postgresql+asyncpg://postgres:wrong@127.0.0.1:{port}/postgres"
    for line in both(tmp_path, {"YUJI_DATABASE_URL": url}):
        assert line == (
            f"PostgreSQL at 127.0.0.1:{port}/postgres refused the password of role postgres: "
            "fix the user or password in YUJI_DATABASE_URL"
        )


async def test_a_database_that_does_not_exist(tmp_path: Path, servers: Servers) -> None:
    server = await servers.server("pg18")
    url = server.url("no_such_store")
    for line in both(tmp_path, {"YUJI_DATABASE_URL": url}):
        assert line == (
            f"database no_such_store does not exist on the PostgreSQL server at "
            f"{server.socket_dir}: create it (createdb -O postgres no_such_store) or fix the "
            "database name in YUJI_DATABASE_URL"
        )
    names = await pg_query(server.dsn("postgres"), "SELECT datname FROM pg_database")
    assert ("no_such_store",) not in names


@pytest.mark.parametrize("scheme", ["postgres", "postgresql"])
def test_a_url_of_another_driver(tmp_path: Path, scheme: str) -> None:
    url = f"{scheme}://yuji:{PASSWORD}@db.example:5432/yuji"
    for line in both(tmp_path, {"YUJI_DATABASE_URL": url}):
        assert line == (
            f"invalid settings: YUJI_DATABASE_URL: {scheme}:// is not a driver yuji runs: "
            "write postgresql+asyncpg://USER:PASSWORD@db.example:5432/yuji "
            "(yuji reaches PostgreSQL through asyncpg)"
        )


def test_asyncpg_not_installed(tmp_path: Path) -> None:
    # An interpreter where `import asyncpg` fails, as where it was never installed.
    shim = tmp_path / "no-asyncpg"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(
        "import sys\nsys.modules['asyncpg'] = None\n", encoding="utf-8"
    )
    env = {
        "YUJI_DATABASE_URL": "postgresql+asyncpg://yuji@127.0.0.1:5432/yuji",
        "PYTHONPATH": os.pathsep.join([str(shim), str(ROOT)]),
    }
    for line in both(tmp_path, env):
        assert line == (
            "YUJI_DATABASE_URL is PostgreSQL but its driver asyncpg is not installed: "
            "pip install 'yuji[postgres]'"
        )


@pytest.mark.parametrize("command", ["status", "stats", "recall", "export"])
def test_reading_a_store_that_is_not_there_makes_nothing(tmp_path: Path, command: str) -> None:
    bot = BotProcess(tmp_path / "bot")  # its env: YUJI_DATA_DIR=<tmp>/bot/data, missing
    argv = {
        "recall": ["recall", "煤球是谁的猫？", "--scope", "group:1"],
        "export": ["export", "--scope", "group:1", "--out", str(tmp_path / "pack.json")],
    }.get(command, [command])
    line = cli(tmp_path, bot.env, *argv)
    database = bot.data_dir / "yuji.db"
    assert line == (
        f"yuji {command}: no yuji store at {database}: check YUJI_DATA_DIR (or "
        "YUJI_DATABASE_URL), or start the bot once to create it"
    )
    assert not bot.data_dir.exists()
    assert not (tmp_path / "pack.json").exists()
    # A folder that is there but holds no store: still nothing made in it.
    bot.data_dir.mkdir(parents=True)
    cli(tmp_path, bot.env, *argv)
    assert list(bot.data_dir.iterdir()) == []


async def test_reading_an_empty_database_makes_nothing(tmp_path: Path, servers: Servers) -> None:
    server, database = await servers.empty("pg18")
    bot = BotProcess(tmp_path / "bot", env={"YUJI_DATABASE_URL": server.url(database)})
    line = cli(tmp_path, bot.env, "stats")
    assert line == (
        f"yuji stats: no yuji store at {server.socket_dir}/{database}: the database has no "
        "yuji tables; check YUJI_DATABASE_URL, or start the bot once to create them"
    )
    tables = await pg_query(
        server.dsn(database), "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
    )
    assert tables == [(0,)]


def test_a_port_in_use_leaves_no_folder(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        bot = BotProcess(tmp_path / "bot", port=port)
        line = refused(bot)
    assert line == (
        f"bot.py: PORT {port} on 127.0.0.1 is in use by another program: stop it, or set "
        "PORT to a free port (and the same in the QQ client's reverse WebSocket URL)"
    )
    assert not bot.data_dir.exists()


def test_a_misspelled_nonebot_setting_is_one_warning_before_anything(tmp_path: Path) -> None:
    with socket.socket() as taken:  # then refused: the warning comes before any start
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        bot = BotProcess(tmp_path / "bot", port=port, env={"NICKNAMES": '["小鱼"]'})
        done = bot.run_to_exit()
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode == 2
    assert len(lines) == 2, lines
    assert lines[0].endswith(
        "NICKNAMES is not a NoneBot setting and is ignored; did you mean NICKNAME?"
    )
    assert "[WARNING]" in lines[0]
    assert lines[1].startswith(f"bot.py: PORT {port} on 127.0.0.1 is in use")
