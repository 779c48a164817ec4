"""The embedder seam: text in, unit-length float32 vectors out.

Implementations: `E5Embedder` (the bundled default, multilingual-e5-small 4-bit),
`OnnxEmbedder` (a user-supplied ONNX model folder) and `FakeEmbedder` (tests). Every
vector an embedder returns is L2-normalised, so a dot product is the cosine
similarity. Memories go through `embed`, questions through `embed_query` (asymmetric
models such as e5 embed the two differently).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    @property
    def model_id(self) -> str:
        """Names the model and its weights; vectors of different ids never mix."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """One row per memory text, shape (len(texts), dim), each row of unit length."""
        ...

    def embed_query(self, text: str) -> Matrix:
        """One question, shape (dim,), unit length."""
        ...


def l2_normalise(matrix: npt.NDArray[np.floating]) -> Matrix:
    """Rows scaled to unit length; an all-zero row stays zero instead of becoming NaN."""
    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return (out / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
