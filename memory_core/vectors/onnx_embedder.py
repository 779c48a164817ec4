"""An embedder for a user-supplied ONNX sentence model (e.g. bge-small-zh-v1.5 int8).

The folder holds `model.onnx` and the Hugging Face `tokenizer.json` made for it. The
model is run with onnxruntime on one thread; the sentence vector is the hidden state
of the first token (CLS pooling), L2-normalised, which is how the bge family is
meant to be used. A model whose only output is already a sentence vector (2-D) is
used as it is.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memory_core.errors import ConfigError
from memory_core.providers.onnx_model import open_onnx

from .embedder import Matrix, l2_normalise

MAX_TOKENS = 512


class OnnxEmbedder:
    def __init__(self, folder: Path | str, *, threads: int = 1) -> None:
        self.folder = Path(folder)
        self.model_path = self.folder / "model.onnx"
        self.tokenizer_path = self.folder / "tokenizer.json"
        for path in (self.model_path, self.tokenizer_path):
            if not path.is_file():
                raise ConfigError(f"vector model folder {self.folder} lacks {path.name}")
        self._threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: tuple[str, ...] = ()
        self._dim: int | None = None
        self._lock = threading.Lock()
        digest = hashlib.sha256()
        for path in (self.model_path, self.tokenizer_path):
            digest.update(path.read_bytes())
        self._model_id = f"onnx-{self.folder.name}-{digest.hexdigest()[:16]}"

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["维度"]).shape[1])
        return self._dim

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            session, self._tokenizer, self._inputs = open_onnx(
                self.model_path, self.tokenizer_path, threads=self._threads, max_tokens=MAX_TOKENS
            )
            self._session = session

    def embed(self, texts: Sequence[str]) -> Matrix:
        if self._session is None:
            self.load()
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        session: Any = self._session
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        feeds: dict[str, Any] = {
            "input_ids": ids,
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        outputs = session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})
        hidden = np.asarray(outputs[0], dtype=np.float32)
        pooled = hidden[:, 0, :] if hidden.ndim == 3 else hidden
        vectors = l2_normalise(pooled)
        self._dim = int(vectors.shape[1])
        return vectors

    def embed_query(self, text: str) -> Matrix:
        # bge-class models are symmetric enough without their retrieval instruction.
        return self.embed([text])[0]
