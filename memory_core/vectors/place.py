"""Where the memory vector index lives: a folder beside a SQLite database, or the
database itself on PostgreSQL (every process of a deployment reads the same rows,
and the one that builds writes them once).

`Dense` asks `stamp()` before it scores (cheap: a file's mtime, or one short read
at most every `TABLE_CHECK_S`) and reloads the index only when it moved; `yuji embed`
(build.py) loads the previous index, saves the new one and records what it was built
from through the same three calls.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from memory_core.clock import Clock
from memory_core.storage import Build, VectorRepo, VectorRow
from memory_core.storage.engine import Database

from .embedder import Matrix
from .store import MANIFEST, STORED_DTYPE, IndexRow, VectorIndex, model_folder

TABLE_CHECK_S = 2.0
"""How often a reader asks PostgreSQL whether another process rebuilt the index."""


class IndexPlace(Protocol):
    description: str

    async def stamp(self, model_id: str) -> object | None: ...
    async def load(self, model_id: str) -> VectorIndex | None: ...
    async def scored(self, model_id: str) -> VectorIndex | None:
        """What recall scores in process: all of `load`, except on pgvector
        (pgvector_place.py), where a chat too large for that is searched in the database."""
        ...

    def searched(self, model_id: str, scope: str) -> ChatSearch | None:
        """How a chat `scored` left out is searched where its vectors are (pgvector,
        a chat over its limit); None: the chat is scored in process."""
        ...

    async def save(self, index: VectorIndex, fingerprint: str, *, changed: bool) -> None: ...
    async def source(self, model_id: str) -> str | None: ...
    def where(self, model_id: str) -> str: ...


class ChatSearch(Protocol):
    """One chat's vectors, searched in the database instead of in process."""

    async def nearest(
        self, query: Matrix, allowed: frozenset[int]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """The nearest rows among `allowed`, ids ascending, with their cosines."""
        ...

    async def cosines(self, query: Matrix, ids: Sequence[int]) -> dict[int, float]:
        """The exact cosine of each of these memories that has a vector."""
        ...


class FolderPlace:
    """The index file under `data/vectors/<model>/` (store.py), memory-mapped."""

    def __init__(self, vectors_dir: Path) -> None:
        self.vectors_dir = vectors_dir
        self.description = f"file index under {vectors_dir}"

    async def stamp(self, model_id: str) -> object | None:
        try:
            return (model_folder(self.vectors_dir, model_id) / MANIFEST).stat().st_mtime_ns
        except OSError:
            return None

    async def load(self, model_id: str) -> VectorIndex | None:
        return VectorIndex.load(model_folder(self.vectors_dir, model_id), model_id)

    async def scored(self, model_id: str) -> VectorIndex | None:
        return await self.load(model_id)

    def searched(self, model_id: str, scope: str) -> ChatSearch | None:
        return None

    async def save(self, index: VectorIndex, fingerprint: str, *, changed: bool) -> None:
        folder = model_folder(self.vectors_dir, index.model_id)
        if changed:
            index.save(folder)
        write_source(folder, fingerprint)

    async def source(self, model_id: str) -> str | None:
        return read_source(model_folder(self.vectors_dir, model_id))

    def where(self, model_id: str) -> str:
        return str(model_folder(self.vectors_dir, model_id))


class TablePlace:
    """The rows of `memory_vectors` (PostgreSQL), read whole into the same in-process
    index, so a question is scored exactly as on SQLite."""

    description = "in the database (memory_vectors, bytea; scored in process)"

    def __init__(self, db: Database, clock: Clock) -> None:
        self.repo = VectorRepo(db)
        self.clock = clock
        self._checked: dict[str, tuple[float, object | None]] = {}

    async def stamp(self, model_id: str) -> object | None:
        now = time.monotonic()
        checked = self._checked.get(model_id)
        if checked is not None and now - checked[0] < TABLE_CHECK_S:
            return checked[1]
        build = await self.repo.build(model_id)
        stamp = None if build is None else build.generation
        self._checked[model_id] = (now, stamp)
        return stamp

    async def load(self, model_id: str) -> VectorIndex | None:
        return as_index(model_id, *await self.repo.rows(model_id))

    async def scored(self, model_id: str) -> VectorIndex | None:
        return await self.load(model_id)

    def searched(self, model_id: str, scope: str) -> ChatSearch | None:
        return None

    async def save(self, index: VectorIndex, fingerprint: str, *, changed: bool) -> None:
        if not changed:
            await self.repo.mark_source(index.model_id, fingerprint)
            return
        matrix = np.ascontiguousarray(index.vectors, dtype=STORED_DTYPE)
        rows = [
            VectorRow(r.memory_id, r.version, r.scope, r.subject, r.text_sha, matrix[i].tobytes())
            for i, r in enumerate(index.rows)
        ]
        await self.repo.replace(
            index.model_id, rows, fingerprint=fingerprint, dim=index.dim, at=self.clock.now()
        )
        self._checked.pop(index.model_id, None)

    async def source(self, model_id: str) -> str | None:
        build = await self.repo.build(model_id)
        return None if build is None else build.fingerprint

    def where(self, model_id: str) -> str:
        return f"the database (memory_vectors, model {model_id})"


def as_index(model_id: str, build: Build | None, rows: Sequence[VectorRow]) -> VectorIndex | None:
    """The rows of one build as the in-process index (None: never built)."""
    if build is None:
        return None
    matrix = (
        np.frombuffer(b"".join(r.vector for r in rows), dtype=STORED_DTYPE).reshape(
            len(rows), build.dim
        )
        if rows
        else np.zeros((0, build.dim), dtype=STORED_DTYPE)
    )
    index_rows = tuple(
        IndexRow(r.memory_id, r.version, r.scope, r.subject, r.text_sha) for r in rows
    )
    return VectorIndex(model_id, build.dim, index_rows, matrix)


SOURCE_FILE = "source.json"
"""Beside the manifest: the database fingerprint the index was built from."""


def write_source(folder: Path, fingerprint: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SOURCE_FILE).write_text(json.dumps({"fingerprint": fingerprint}), encoding="utf-8")


def read_source(folder: Path) -> str | None:
    try:
        return str(json.loads((folder / SOURCE_FILE).read_text(encoding="utf-8"))["fingerprint"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
