"""Apply the Alembic migrations that ship inside memory_core."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

from .engine import Database

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


async def upgrade(db: Database, revision: str = "head") -> None:
    """Bring the database to `revision`; a no-op when it is already there."""
    async with db.write() as conn:
        await conn.run_sync(_upgrade, revision)


async def downgrade(db: Database, revision: str) -> None:
    async with db.write() as conn:
        await conn.run_sync(_downgrade, revision)


async def current_revision(db: Database) -> str | None:
    async with db.read() as conn:
        return await conn.run_sync(lambda c: MigrationContext.configure(c).get_current_revision())


def _upgrade(connection: Connection, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


def _downgrade(connection: Connection, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.downgrade(config, revision)
