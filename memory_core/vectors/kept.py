"""Vectors computed once and kept in a file, answered in place of a model's.

The relevance weights are fitted on features that include cosines, and which memories
a question's dense search finds depends on those cosines. The bundled e5 engine
computes `1/sqrt` with the CPU's approximate `rsqrtss` (it is built for speed) and
then rounds activations to 8 bits, so one CPU's last bits become a thousandth in the
vector on another, enough to change which candidates a search finds. The training run
therefore reads the corpus's vectors from one kept file: retraining on any x86-64 CPU
gives the same rows, and the model is still checked against the file (`agreement`),
so a changed model does not pass unnoticed.

Vectors are kept as float16 (half the file; the rows are whatever the file says, so
the rounding is part of the definition, not an error) and keyed by the sha256 of the
text with its kind (memory or question), since e5 embeds the two differently.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from memory_core.errors import ValidationError

from .embedder import Embedder, Matrix
from .store import model_folder

AGREEMENT = 0.999
"""The lowest cosine between the model's vector and the kept one that still counts as
the same model: CPUs differ by 1 - 5e-5 (seen on two), another model by far more."""


class VectorMissing(ValidationError):
    """A text has no kept vector and the file may not grow (a check, not a training)."""


class VectorsDisagree(ValidationError):
    """The model gives a vector the kept file does not hold: another model or weights."""


def kept_file(folder: Path, model_id: str) -> Path:
    """Where `folder` keeps the vectors of `model_id`."""
    return folder / f"{model_folder(folder, model_id).name}.npz"


def key(text: str, *, query: bool) -> str:
    kind = "query" if query else "passage"
    return hashlib.sha256(f"{kind}\0{text}".encode()).hexdigest()[:20]


@dataclass
class KeptVectors:
    """One model's kept vectors by `key`; `used` records what a run asked for."""

    model_id: str
    rows: dict[str, Matrix] = field(default_factory=dict[str, Matrix])
    used: set[str] = field(default_factory=set[str])
    """The keys a run asked for: what `save` writes."""
    loaded: frozenset[str] = frozenset()
    """The keys the file held when it was read."""

    @classmethod
    def load(cls, path: Path, model_id: str) -> KeptVectors:
        """The file's vectors, or none when there is no file yet (a first training)."""
        if not path.exists():
            return cls(model_id)
        with np.load(path, allow_pickle=False) as data:
            kept = str(data["model_id"])
            if kept != model_id:
                raise VectorsDisagree(f"{path} keeps vectors of {kept}, not {model_id}")
            keys = [str(k) for k in data["keys"]]
            matrix = data["vectors"].astype(np.float32)
        return cls(model_id, dict(zip(keys, matrix, strict=True)), loaded=frozenset(keys))

    def save(self, path: Path) -> bool:
        """Writes the vectors a run used (no others), in key order so the same set gives
        the same bytes; False when the file already holds exactly them."""
        if frozenset(self.used) == self.loaded:
            return False
        keys = sorted(self.used)
        arrays = {
            "model_id": np.array(self.model_id),
            "keys": np.array(keys),
            "vectors": np.stack([self.rows[k] for k in keys]).astype(np.float16),
        }
        buffer = io.BytesIO()
        # np.savez stamps each member with the time of writing; a fixed stamp keeps a
        # retrain on an unchanged corpus from rewriting the file.
        with zipfile.ZipFile(buffer, "w") as archive:
            for name, array in arrays.items():
                member = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                data = io.BytesIO()
                np.lib.format.write_array(data, array, allow_pickle=False)
                archive.writestr(member, data.getvalue(), compress_type=zipfile.ZIP_DEFLATED)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(buffer.getvalue())
        return True


class KeptEmbedder:
    """Answers from `kept`. A training (`grow`) embeds with `model` only the texts the
    file lacks, and keeps them; a check refuses such a text, and embeds every other
    with `model` to compare (the lowest cosine is `agreement`). `model` is the real
    embedder: its id is this one's."""

    def __init__(
        self, kept: KeptVectors, model: Embedder, *, grow: bool, compare_every: int = 1
    ) -> None:
        self.kept = kept
        self.model = model
        self.grow = grow
        self.compare_every = compare_every
        """A check embeds one text in this many again (chosen by its key): another
        model differs on every text, so a share of them tells as well as all."""
        self.agreement = 1.0

    @property
    def model_id(self) -> str:
        return self.model.model_id

    @property
    def dim(self) -> int:
        return self.model.dim

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return self.model.embed(texts)
        return np.stack([self._one(t, query=False) for t in texts])

    def embed_query(self, text: str) -> Matrix:
        return self._one(text, query=True)

    def _live(self, text: str, *, query: bool) -> Matrix:
        return self.model.embed_query(text) if query else self.model.embed([text])[0]

    def _one(self, text: str, *, query: bool) -> Matrix:
        k = key(text, query=query)
        kept = self.kept.rows.get(k)
        if kept is None:
            if not self.grow:
                raise VectorMissing(
                    f"no kept vector for the {'question' if query else 'memory'} {text[:40]!r}:"
                    " the corpus changed since the vectors were kept (retrain)"
                )
            kept = self._live(text, query=query).astype(np.float16).astype(np.float32)
            self.kept.rows[k] = kept
        elif not self.grow and int(k[:8], 16) % self.compare_every == 0:
            # A check compares; a training trusts the file (the model id pins the model).
            live = self._live(text, query=query)
            cosine = float(np.dot(kept, live) / max(float(np.linalg.norm(kept)), 1e-12))
            self.agreement = min(self.agreement, cosine)
            if cosine < AGREEMENT:
                raise VectorsDisagree(
                    f"{self.model_id} gives {text[:40]!r} a vector at cosine {cosine:.4f} from"
                    " the kept one: another model or other weights (retrain)"
                )
        self.kept.used.add(k)
        return kept.copy()
