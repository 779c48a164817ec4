"""A local cross-encoder (`YUJI_RERANK_MODEL_PATH`): a folder with `model.onnx` and the
Hugging Face `tokenizer.json` made for it, e.g. bge-reranker-base exported to ONNX.

Each (question, memory) pair is tokenised together as the model was trained
(`[CLS] question [SEP] memory [SEP]`, truncated to `MAX_TOKENS`) and run with
onnxruntime on one thread, off the event loop. A one-logit head gives sigmoid(logit);
a two-logit head the softmax's second column: a score in 0..1 either way. The model
loads on the first call, once; every call is an `llm_usage` row (`rerank`, tokens read).
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_core.errors import ConfigError, LLMBadResponse

from .onnx_model import open_onnx
from .usage import Record, timed

MAX_TOKENS = 512


class CrossEncoder:
    def __init__(self, folder: Path | str, *, record: Record | None = None) -> None:
        self.folder = Path(folder)
        self.model_path = self.folder / "model.onnx"
        self.tokenizer_path = self.folder / "tokenizer.json"
        for path in (self.model_path, self.tokenizer_path):
            if not path.is_file():
                raise ConfigError(f"rerank model folder {self.folder} lacks {path.name}")
        digest = hashlib.sha256()
        for path in (self.model_path, self.tokenizer_path):
            digest.update(path.read_bytes())
        self._id = f"onnx-{self.folder.name}-{digest.hexdigest()[:16]}"
        self.record = record
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: tuple[str, ...] = ()
        self._lock = threading.Lock()

    @property
    def reranker_id(self) -> str:
        return self._id

    def load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            session, self._tokenizer, self._inputs = open_onnx(
                self.model_path, self.tokenizer_path, threads=1, max_tokens=MAX_TOKENS
            )
            self._session = session

    async def scores(
        self, query: str, documents: Sequence[str], *, scope: str | None = None
    ) -> list[float]:
        if not documents:
            return []
        done = timed(self.record, "rerank", self._id, scope)
        try:
            found, tokens = await asyncio.to_thread(self.score_pairs, query, documents)
        except BaseException as exc:  # cancelled by the wake's deadline too
            done(exc, 0)
            raise
        done(None, tokens)
        return found

    async def aclose(self) -> None:
        """Nothing to release: the session lives as long as the process."""

    def score_pairs(self, query: str, documents: Sequence[str]) -> tuple[list[float], int]:
        """(one score per document, tokens read), blocking."""
        if self._session is None:
            self.load()
        session: Any = self._session
        with self._lock:  # one session, one thread at a time
            encodings = self._tokenizer.encode_batch([(query, d) for d in documents])
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds: dict[str, Any] = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": mask,
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            outputs = session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})
        return head_scores(np.asarray(outputs[0], dtype=np.float64), len(documents)), int(
            mask.sum()
        )


def head_scores(logits: npt.NDArray[np.float64], count: int) -> list[float]:
    """Scores in 0..1 from a classification head's logits (one or two per pair)."""
    if logits.ndim == 2 and logits.shape[1] == 2:
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        out = e[:, 1] / e.sum(axis=1)
    else:
        flat = logits.reshape(len(logits), -1) if logits.ndim > 1 else logits.reshape(-1, 1)
        if flat.shape[1] != 1:
            raise LLMBadResponse(f"cross-encoder gives {flat.shape[1]} logits per pair, not 1 or 2")
        out = 1.0 / (1.0 + np.exp(-np.clip(flat[:, 0], -30, 30)))
    if len(out) != count or not np.isfinite(out).all():
        raise LLMBadResponse("cross-encoder gave no finite score for every pair")
    return [float(v) for v in out]
