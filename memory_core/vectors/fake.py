"""A deterministic embedder for tests: hashed characters, or vectors pinned by hand."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np

from .embedder import Matrix, l2_normalise


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
