"""The embedder seam: text in, unit-length float32 vectors out.

Implementations: `UseEmbedder` (the bundled default, multilingual Universal Sentence
Encoder), `OnnxEmbedder` (a user-supplied ONNX model folder) and `FakeEmbedder`
(tests). Every vector an embedder returns is L2-normalised, so a dot product is the
cosine similarity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Calibration:
    """The operating point of one model, chosen from `yuji eval --vector-sweep`."""

    threshold: float
    margin: float


@runtime_checkable
class Embedder(Protocol):
    @property
    def model_id(self) -> str:
        """Names the model and its weights; vectors of different ids never mix."""
        ...

    @property
    def dim(self) -> int: ...

    @property
    def calibration(self) -> Calibration:
        """The gate's default threshold and margin for this model's score scale."""
        ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """One row per text, shape (len(texts), dim), each row of unit length."""
        ...


def l2_normalise(matrix: npt.NDArray[np.floating]) -> Matrix:
    """Rows scaled to unit length; an all-zero row stays zero instead of becoming NaN."""
    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return (out / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
