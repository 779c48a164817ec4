"""`Yuji`: the core opened as one object, the thing plugins and the CLI hold.

It owns the database handle, the settings and the injected side effects, and
exposes each concept's service as an attribute. Opening it applies migrations.
"""

from __future__ import annotations

from dataclasses import dataclass

from .clock import Clock, SystemClock
from .settings import Settings
from .storage import migrate
from .storage.engine import Database


@dataclass
class Yuji:
    settings: Settings
    db: Database
    clock: Clock

    @classmethod
    async def open(cls, settings: Settings, *, clock: Clock | None = None) -> Yuji:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        db = Database(settings.sqlalchemy_url)
        await migrate.upgrade(db)
        return cls(settings=settings, db=db, clock=clock or SystemClock())

    async def close(self) -> None:
        await self.db.dispose()
