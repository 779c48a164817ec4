"""An embedder over an OpenAI-compatible `/embeddings` API (SiliconFlow, DashScope's
compatible mode, Xinference, vLLM, TEI's OpenAI route, ...).

Memory texts go out in batches of `batch`, retried on 429 and 5xx (`http.post_json`),
each batch within `timeout_s`; a question goes alone, within its own shorter deadline
(`YUJI_EMBED_TIMEOUT_S`) and without retries: past it recall answers by words. Every
request is one `llm_usage` row under the `embed` job. Vectors come back as the provider
computed them, L2-normalised here; an answer with the wrong count, ragged or non-finite
vectors is `LLMBadResponse`, never a vector stored.

The model id is `api-<model>`: vectors are stored per model name, so the same model
served by two providers shares one index (they are meant to give the same vectors).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt

from memory_core.errors import LLMBadResponse
from memory_core.settings import ModelEndpoint

from .http import post_json
from .usage import Record, timed

BATCH_TIMEOUT_S = 60.0
RETRIES = 4


class ApiEmbedder:
    batched = True
    """`yuji embed` hands it every text at once (vectors/build.py)."""

    def __init__(
        self,
        endpoint: ModelEndpoint,
        *,
        batch: int = 32,
        query_timeout_s: float = 2.0,
        timeout_s: float = BATCH_TIMEOUT_S,
        retries: int = RETRIES,
        record: Record | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = endpoint.base_url.rstrip("/") + "/embeddings"
        self.model = endpoint.model
        self._key = endpoint.api_key
        self.batch = batch
        self.query_timeout_s = query_timeout_s
        self.timeout_s = timeout_s
        self.retries = retries
        self.record = record
        self._client = httpx.Client(transport=transport)
        self._dim: int | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return f"api-{self.model}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["维度"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts = [
            self._request(list(texts[i : i + self.batch]), self.timeout_s, self.retries)
            for i in range(0, len(texts), self.batch)
        ]
        return np.vstack(parts)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._request([text], self.query_timeout_s, 0)[0]

    def _request(self, texts: list[str], timeout_s: float, retries: int) -> npt.NDArray[np.float32]:
        done = timed(self.record, "embed", self.model)
        body = {"model": self.model, "input": texts, "encoding_format": "float"}
        try:
            payload = post_json(
                self._client,
                self.url,
                body,
                api_key=self._key,
                timeout_s=timeout_s,
                retries=retries,
            )
            vectors = parse_embeddings(payload, len(texts), self._dim)
        except Exception as exc:
            done(exc, 0)
            raise
        done(None, usage_tokens(payload))
        with self._lock:
            self._dim = int(vectors.shape[1])
        return vectors

    def close(self) -> None:
        self._client.close()


def parse_embeddings(payload: Any, count: int, dim: int | None) -> npt.NDArray[np.float32]:
    """`data[i].embedding` in `index` order, unit length, checked."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list) or len(data) != count:
        raise LLMBadResponse(f"embeddings answer holds no list of {count} vectors")
    try:
        items: list[Any] = list(data)
        ordered = sorted(items, key=lambda d: int(d.get("index", 0)))
        matrix = np.asarray([d["embedding"] for d in ordered], dtype=np.float64)
    except (TypeError, ValueError, KeyError, AttributeError):
        raise LLMBadResponse(
            "embeddings answer holds vectors that are not lists of numbers"
        ) from None
    if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.isfinite(matrix).all():
        raise LLMBadResponse("embeddings answer holds ragged, empty or non-finite vectors")
    if dim is not None and matrix.shape[1] != dim:
        raise LLMBadResponse(f"embeddings of {matrix.shape[1]} dimensions, earlier ones had {dim}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if (norms == 0).any():
        raise LLMBadResponse("embeddings answer holds an all-zero vector")
    return (matrix / norms).astype(np.float32)


def usage_tokens(payload: Any) -> int:
    """Input tokens as the provider reports them, 0 when it does not."""
    if not isinstance(payload, dict):
        return 0
    usage = payload.get("usage")
    if isinstance(usage, dict):
        for key in ("prompt_tokens", "total_tokens", "input_tokens"):
            value = usage.get(key)
            if isinstance(value, int):
                return value
    meta = payload.get("meta")
    if isinstance(meta, dict):
        tokens = meta.get("tokens")
        if isinstance(tokens, dict) and isinstance(tokens.get("input_tokens"), int):
            return int(tokens["input_tokens"])
    return 0
