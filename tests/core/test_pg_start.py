"""Opening a PostgreSQL store: a server too old, a role that may not connect or may
not build the schema, each one line before any migration runs; the connection
settings as pg_dump gets them. On the real servers of tests/backends.py."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from memory_core import Settings, Yuji
from memory_core.errors import ConfigError, StorageError
from memory_core.storage.postgres import pg_dump, pg_server
from memory_core.storage.postgres.pg_server import ServerInfo, label, too_old

pytestmark = pytest.mark.pg_only("PostgreSQL's servers and roles")


def test_a_server_older_than_14_is_one_line() -> None:
    url = "postgresql+asyncpg://yuji:secret@db.example:5433/yuji"
    assert too_old(ServerInfo(140000, "14.0"), url) is None
    line = too_old(ServerInfo(130011, "13.11"), url)
    assert line == "PostgreSQL 13.11 at db.example:5433/yuji is too old: yuji needs 14 or newer"


def test_the_password_goes_in_the_environment_never_on_the_command_line() -> None:
    url = "postgresql+asyncpg://yuji:s3cret@/yuji?host=/run/pg"
    args, env = pg_dump.connection(url)
    assert args == ["--no-password", "--host", "/run/pg", "--username", "yuji"]
    assert env["PGPASSWORD"] == "s3cret"
    assert "s3cret" not in label(url)
    assert label(url) == "/run/pg/yuji"


@pytest.fixture
async def role(database_url: str) -> AsyncIterator[str]:
    """A login role of its own (no privileges granted); its URL."""
    name = f"r_{make_url(database_url).database}"
    async with pg_server.connected(database_url, autocommit=True) as conn:
        await conn.execute(text(f"CREATE ROLE {name} LOGIN"))
        await conn.execute(text("REVOKE CREATE ON SCHEMA public FROM PUBLIC"))
    yield make_url(database_url).set(username=name).render_as_string(hide_password=False)
    async with pg_server.connected(database_url, autocommit=True) as conn:
        await conn.execute(text(f"DROP OWNED BY {name}"))
        await conn.execute(text(f"DROP ROLE {name}"))


async def _empty_database(database_url: str, owner: str) -> str:
    """A database with nothing in it (the role may connect, not create)."""
    name = f"e_{make_url(database_url).database}"
    async with pg_server.connected(database_url, autocommit=True) as conn:
        await conn.execute(text(f"CREATE DATABASE {name}"))
    url = pg_server.with_database(database_url, name)
    async with pg_server.connected(url, autocommit=True) as conn:
        await conn.execute(text("REVOKE CREATE ON SCHEMA public FROM PUBLIC"))
    return make_url(url).set(username=owner).render_as_string(hide_password=False)


async def test_a_role_that_may_not_create_is_one_line_before_any_migration(
    settings: Settings, database_url: str, role: str
) -> None:
    user = make_url(role).username or ""
    empty = await _empty_database(database_url, user)
    try:
        with pytest.raises(ConfigError) as raised:
            await Yuji.open(settings.with_changes(database_url=empty))
        line = str(raised.value)
        assert "\n" not in line
        assert f"role {user} may not CREATE in schema public" in line
        assert "GRANT CREATE ON SCHEMA public" in line
        async with pg_server.connected(empty) as conn:
            assert await pg_server.user_relations(conn) == 0  # nothing half-made
    finally:
        await pg_server.drop_database(database_url, make_url(empty).database or "")


async def test_a_role_that_may_not_connect_is_one_line(
    settings: Settings, database_url: str, role: str
) -> None:
    database = make_url(database_url).database
    async with pg_server.connected(database_url, autocommit=True) as conn:
        await conn.execute(text(f"REVOKE CONNECT ON DATABASE {database} FROM PUBLIC"))
    with pytest.raises(StorageError) as raised:
        await Yuji.open(settings.with_changes(database_url=role))
    line = str(raised.value)
    assert "\n" not in line
    assert line.startswith("cannot connect to PostgreSQL at ")
    assert "permission denied" in line


async def test_a_store_at_head_runs_with_a_role_that_only_reads_and_writes_rows(
    settings: Settings, database_url: str, role: str
) -> None:
    user = make_url(role).username
    async with pg_server.connected(database_url, autocommit=True) as conn:
        await conn.execute(
            text(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {user}")
        )
        await conn.execute(text(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {user}"))
    core = await Yuji.open(settings.with_changes(database_url=role, vector_mode="off"))
    await core.close()
