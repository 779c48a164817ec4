"""A deterministic embedder for tests: hashed characters, or vectors pinned by hand."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np

from .embedder import Embedder, Matrix, l2_normalise


class FakeEmbedder:
    """Bag of hashed characters (so texts sharing characters are similar), unless a
    text is pinned in `pinned`, which wins. Counts every text it embeds in `calls`."""

    def __init__(
        self,
        *,
        dim: int = 32,
        pinned: Mapping[str, Sequence[float]] | None = None,
        model_id: str = "fake",
    ) -> None:
        self.dim = dim
        self.model_id = model_id
        self.pinned = {text: list(vector) for text, vector in (pinned or {}).items()}
        self.calls: list[str] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls.extend(texts)
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            if text in self.pinned:
                rows[i] = np.asarray(self.pinned[text], dtype=np.float32)
                continue
            for char in text:
                bucket = int.from_bytes(hashlib.blake2b(char.encode(), digest_size=4).digest())
                rows[i, bucket % self.dim] += 1.0
        return l2_normalise(rows)

    def embed_query(self, text: str) -> Matrix:
        return self.embed([text])[0]


class NudgedEmbedder:
    """`model` with every component of every vector moved by +-`by`, the signs drawn
    from `seed`: another CPU's arithmetic, at its worst seen (1.6e-3 for e5) or less."""

    def __init__(self, model: Embedder, by: float, *, seed: int = 7) -> None:
        self.model, self.by, self.seed = model, by, seed

    @property
    def model_id(self) -> str:
        return self.model.model_id

    @property
    def dim(self) -> int:
        return self.model.dim

    def _nudge(self, rows: Matrix) -> Matrix:
        signs = np.random.default_rng(self.seed).choice([-1.0, 1.0], size=rows.shape)
        return (rows + self.by * signs).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> Matrix:
        return self._nudge(self.model.embed(texts))

    def embed_query(self, text: str) -> Matrix:
        return self._nudge(self.model.embed_query(text)[None])[0]
