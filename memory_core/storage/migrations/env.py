"""Alembic environment owned by memory_core.

Migrations run on the connection `migrate.upgrade()` hands over in
`config.attributes["connection"]`; run from the `alembic` command line (development
only) they open `sqlalchemy.url` themselves.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from memory_core.storage.schema import metadata

config = context.config


def _include_object(
    _obj: object, name: str | None, type_: str, _reflected: bool, _compare_to: object
) -> bool:
    # Derived full-text tables are created by raw SQL in migrations, not by metadata;
    # so are pgvector's column and its HNSW indexes (0020, storage/vectors/pgvector.py).
    if type_ == "table" and name is not None and name.startswith("memory_fts"):
        return False
    if type_ == "column" and name == "embedding":
        return False
    return not (type_ == "index" and name is not None and name.startswith("ix_memory_vectors_hnsw"))


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=True,
        include_object=_include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    url = config.get_main_option("sqlalchemy.url") or "sqlite:///data/yuji.db"
    with create_engine(url).connect() as conn:
        _run(conn)
