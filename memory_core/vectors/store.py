"""The vector index: a derived file beside the database, never inside it.

Layout, one folder per model under `data/vectors/`:

    data/vectors/<model>/manifest.json        model id, dimension, one row per vector:
                                              [memory id, version, scope, subject, text sha]
    data/vectors/<model>/vectors-<sha>.npy    float32 matrix, row i = manifest row i

Rows are sorted by (scope, memory id) and the matrix file is named by its content
hash, so the same memories embedded by the same model give byte-identical files:
deleting the folder and rebuilding reproduces the index. The matrix is memory-mapped
and each chat's rows are one contiguous block, so a question scores its own chat's
block in place (no copy) and the bot process only pages in the chats it is asked in. A writer replaces `manifest.json`
atomically after the new matrix is on disk, so a reader sees the old index or the
new one, never half of each.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .embedder import Matrix

Stored = npt.NDArray[np.floating]
STORED_DTYPE = np.float32
Positions = npt.NDArray[np.int64]
"""Row positions in the index, ascending."""
_NONE: Positions = np.zeros(0, np.int64)
_NONE.setflags(write=False)
SELECTIONS_KEPT = 8

FORMAT = 1
MANIFEST = "manifest.json"
BLOCK_ELEMENTS = 1 << 17
"""Matrix elements per product in `dot_rows` (341 rows of 384)."""


@dataclass(frozen=True, slots=True)
class IndexRow:
    memory_id: int
    version: int
    scope: str
    subject: str
    text_sha: str


def dot_rows(matrix: Stored, query: Matrix) -> Matrix:
    """`matrix @ query` (float32), one block of rows at a time. OpenBLAS splits one
    large matrix-vector product across its threads, and on a small busy host the
    product then waits for a core: 20k x 384 took 8 ms to 80 ms that way against 1 ms
    on one thread. Blocks of `BLOCK_ELEMENTS` stay under its threading threshold
    (each row is the same dot product either way)."""
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    out = np.empty(len(matrix), dtype=np.float32)
    step = max(1, BLOCK_ELEMENTS // max(q.shape[0], 1))
    for start in range(0, len(matrix), step):
        np.matmul(matrix[start : start + step], q, out=out[start : start + step])
    return out


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def model_folder(vectors_dir: Path, model_id: str) -> Path:
    return vectors_dir / re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)


class VectorIndex:
    """One model's vectors and the lookups recall needs, derived once from the rows.

    The rows and the matrix are never changed after construction; only the small
    cache of `select` answers grows."""

    def __init__(
        self, model_id: str, dim: int, rows: tuple[IndexRow, ...], vectors: Stored
    ) -> None:
        if vectors.shape != (len(rows), dim):
            raise ValueError(f"matrix {vectors.shape} does not fit {len(rows)} rows")
        self.model_id = model_id
        self.dim = dim
        self.rows = rows
        self.vectors = vectors
        subjects: dict[str, set[str]] = {}
        for row in rows:
            subjects.setdefault(row.scope, set()).add(row.subject)
        self._subjects = {k: frozenset(v) for k, v in subjects.items()}
        self._ids = np.fromiter((r.memory_id for r in rows), np.int64, len(rows))
        by_scope: dict[str, list[int]] = {}
        for i, row in enumerate(rows):
            by_scope.setdefault(row.scope, []).append(i)
        self._scope_rows = {k: np.asarray(v, np.int64) for k, v in by_scope.items()}
        self._blocks = {
            k: (v[0], v[-1] + 1) for k, v in by_scope.items() if v[-1] - v[0] + 1 == len(v)
        }
        """scope -> (start, stop) when the scope's rows are contiguous (as `save` writes them)."""
        code: dict[str, int] = {}
        self._subject_codes = np.fromiter(
            (code.setdefault(r.subject, len(code)) for r in rows), np.int64, len(rows)
        )
        self._subject_code = code
        self._selected: dict[tuple[str, frozenset[int]], Positions] = {}
        """The last few `select` answers: recall asks with the same cached id set until a
        write changes it, and the selection costs more than the scoring at 10^4."""

    @classmethod
    def empty(cls, model_id: str, dim: int) -> VectorIndex:
        return cls(model_id, dim, (), np.zeros((0, dim), dtype=STORED_DTYPE))

    def subjects(self, scope: str) -> frozenset[str]:
        """The subjects of this scope's indexed memories."""
        return self._subjects.get(scope, frozenset())

    def select(self, scope: str, candidate_ids: Iterable[int]) -> Positions:
        """Row positions (ascending, read-only) of the candidates that are indexed AND
        of this scope.

        Both conditions, always: a candidate id of another chat never reaches the
        scoring, whatever the caller passed.
        """
        in_scope = self._scope_rows.get(scope)
        if in_scope is None:
            return _NONE
        ids = candidate_ids if isinstance(candidate_ids, frozenset) else frozenset(candidate_ids)
        key = (scope, ids)
        hit = self._selected.get(key)
        if hit is not None:
            return hit
        wanted = np.fromiter(ids, np.int64, len(ids))
        positions = in_scope[np.isin(self._ids[in_scope], wanted)]
        positions.setflags(write=False)
        if len(self._selected) >= SELECTIONS_KEPT:
            self._selected.pop(next(iter(self._selected)))
        self._selected[key] = positions
        return positions

    def about(self, positions: Positions, subjects: Iterable[str]) -> Positions:
        """The positions whose memory is about one of `subjects`."""
        codes = [self._subject_code[s] for s in subjects if s in self._subject_code]
        if not codes:
            return _NONE
        return positions[np.isin(self._subject_codes[positions], codes)]

    def ids_at(self, positions: Positions) -> npt.NDArray[np.int64]:
        return self._ids[np.asarray(positions, dtype=np.int64)]

    def scores(self, positions: Positions, query: Matrix) -> Matrix:
        """Cosine of the (unit) query vector with each selected row."""
        if not len(positions):
            return np.zeros(0, dtype=np.float32)
        wanted = np.asarray(positions, dtype=np.int64)
        q = query.reshape(-1).astype(np.float32)
        scope = self.rows[int(wanted[0])].scope
        block = self._blocks.get(scope)
        if (
            block is not None
            and len(wanted) * 4 >= block[1] - block[0]
            and block[0] <= int(wanted.min())
            and int(wanted.max()) < block[1]
        ):
            # Most of the chat is asked about: one product over its block, in place.
            start, stop = block
            whole = dot_rows(self.vectors[start:stop], q)
            return whole[wanted - start]
        return dot_rows(self.vectors[wanted], q)

    # --- files -----------------------------------------------------------------------

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        matrix = np.ascontiguousarray(self.vectors, dtype=STORED_DTYPE)
        digest = hashlib.sha256(matrix.tobytes()).hexdigest()[:16]
        name = f"vectors-{digest}.npy"
        if not (folder / name).is_file():
            tmp = folder / f".{name}.tmp"
            with tmp.open("wb") as fh:
                np.save(fh, matrix, allow_pickle=False)
            os.replace(tmp, folder / name)
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "model_id": self.model_id,
            "dim": self.dim,
            "vectors": name,
            "rows": [[r.memory_id, r.version, r.scope, r.subject, r.text_sha] for r in self.rows],
        }
        tmp = folder / f".{MANIFEST}.tmp"
        tmp.write_text(json.dumps(manifest, ensure_ascii=False, indent=0), encoding="utf-8")
        os.replace(tmp, folder / MANIFEST)
        for old in folder.glob("vectors-*.npy"):
            if old.name != name:
                with contextlib.suppress(OSError):
                    old.unlink()

    @classmethod
    def load(cls, folder: Path, model_id: str) -> VectorIndex | None:
        """The index in `folder`, or None when it is missing, unreadable or of
        another model (a derived file: the caller rebuilds instead of failing)."""
        try:
            manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
            if manifest.get("format") != FORMAT or manifest.get("model_id") != model_id:
                return None
            vectors = np.load(folder / str(manifest["vectors"]), mmap_mode="r", allow_pickle=False)
            rows = tuple(
                IndexRow(int(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4]))
                for r in manifest["rows"]
            )
            return cls(model_id, int(manifest["dim"]), rows, vectors)
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None
