"""Whether the store of a configuration can be opened: one check for every way in.

`bot.py` runs it before NoneBot starts, the `yuji` command before any subcommand opens
the core (`Yuji.open` runs it first), and the plugin inside another bot at its start-up,
where a refusal leaves the plugin inactive instead of stopping the host. Each problem
is one `YujiError` line naming the fix (docs/errors.md lists them): a URL of a driver
yuji does not run (refused already by the settings), asyncpg not installed, a server
that does not answer, a login it refuses, a database it does not have, a server too
old, a role that may not build the schema; and, for the commands that only read
(`existing=True`), a store that is not there. Nothing is created by the check: no
folder, no file, no database.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from memory_core.errors import ConfigError
from memory_core.settings import Settings
from memory_core.storage import migrate, pg_server

POSTGRES_EXTRA = "pip install 'yuji[postgres]'"


async def check_store(settings: Settings, *, existing: bool = False) -> None:
    """Raise the one line that stops this store from opening, or return.

    `existing`: the caller only reads (status, stats, recall, export), so a store
    that is not there is refused too ("no yuji store at ..."), rather than made."""
    url = settings.sqlalchemy_url
    if url.startswith("sqlite"):
        missing = missing_sqlite_store(url) if existing else None
        if missing is not None:
            raise ConfigError(
                f"no yuji store at {missing}: check YUJI_DATA_DIR (or YUJI_DATABASE_URL), "
                "or start the bot once to create it"
            )
        return
    try:
        importlib.import_module("asyncpg")  # the engine imports it anyway
    except ImportError:
        raise ConfigError(
            f"YUJI_DATABASE_URL is PostgreSQL but its driver asyncpg is not installed: "
            f"{POSTGRES_EXTRA}"
        ) from None
    async with pg_server.connected(url) as conn:
        await pg_server.check_can_run(conn, url, migrate.head_revision())
        if existing and await pg_server.schema_revision(conn) is None:
            raise ConfigError(
                f"no yuji store at {pg_server.label(url)}: the database has no yuji tables; "
                "check YUJI_DATABASE_URL, or start the bot once to create them"
            )


def missing_sqlite_store(url: str) -> Path | None:
    """The file of an SQLite URL when it is not there (None: it is, or in memory)."""
    path = url.partition(":///")[2]
    if path in {"", ":memory:"} or Path(path).is_file():
        return None
    return Path(path).absolute()
