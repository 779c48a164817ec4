"""Which place (place.py) holds the memory vector index of a store."""

from __future__ import annotations

from pathlib import Path

from memory_core.clock import Clock
from memory_core.storage import searchable
from memory_core.storage.engine import Database

from .pgvector_place import PgvectorPlace
from .place import FolderPlace, IndexPlace, TablePlace


async def place_for(db: Database, vectors_dir: Path, clock: Clock) -> IndexPlace:
    """The index's place for this store: pgvector where migration 0020 could add its
    column (and the extension is 0.8 or newer), else the bytea rows on PostgreSQL,
    else the folder beside SQLite."""
    if not db.is_postgres:
        return FolderPlace(vectors_dir)
    async with db.read() as conn:
        has_pgvector = await searchable(conn)
    return PgvectorPlace(db, clock) if has_pgvector else TablePlace(db, clock)
