"""Which backend runs: the database and the vector store, for `yuji status`, `/status`
and the console's overview."""

from __future__ import annotations

from dataclasses import dataclass

from memory_core.storage.backend_info import database_line
from memory_core.storage.engine import Database

VECTORS_OFF = "off (YUJI_VECTOR_MODE=off)"


@dataclass(frozen=True, slots=True)
class Backend:
    database: str
    """"SQLite <file>" or "PostgreSQL <version> (<host>/<database>)"."""
    vectors: str
    """Where the vectors live (`Dense.vector_store`), or that dense retrieval is off."""
    models: str = ""
    """Recall's embedding model and reranker (docs/providers.md), when known."""

    def lines(self) -> dict[str, str]:
        """The `/status` lines."""
        out = {"数据库": self.database, "向量存储": self.vectors}
        if self.models:
            out["回忆模型"] = self.models
        return out


async def describe(db: Database, vector_store: str | None, models: str = "") -> Backend:
    return Backend(
        database=await database_line(db), vectors=vector_store or VECTORS_OFF, models=models
    )
