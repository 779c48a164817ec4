"""A reranker over a provider's rerank API.

Three request shapes (`YUJI_RERANK_FORMAT`):

- `documents`: `POST {base}/rerank` with `model`, `query`, `documents`, `top_n`; the
  answer's `results` hold `index` and `relevance_score` (Jina, Cohere, SiliconFlow,
  Xinference, vLLM);
- `tei`: Text Embeddings Inference's `POST {base}/rerank` with `query` and `texts`,
  answered by a list of `index` and `score`;
- `dashscope`: DashScope's text-rerank service (the URL is the service's own), with
  `input.query`, `input.documents` and `parameters.top_n`; `output.results`.

`auto` picks dashscope for a dashscope URL, else documents, and moves to tei once
for good when the server refuses a request for lacking `texts` (what TEI answers).
One attempt per wake, within the wake's deadline; every call is an `llm_usage` row
under the `rerank` job. An answer that does not give one finite score to every
document is `LLMBadResponse`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import httpx

from memory_core.errors import LLMBadResponse
from memory_core.settings import ModelEndpoint, RerankFormat

from .embeddings import usage_tokens
from .http import Refused, apost_json
from .usage import Record, timed


class ApiReranker:
    def __init__(
        self,
        endpoint: ModelEndpoint,
        *,
        shape: RerankFormat = "auto",
        timeout_s: float = 2.0,
        record: Record | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        base = endpoint.base_url.rstrip("/")
        if shape == "auto":
            shape = "dashscope" if "dashscope" in base else "documents"
        self.shape: RerankFormat = shape
        self._auto = shape == "documents"
        self.url = base if base.endswith("/rerank") or shape == "dashscope" else base + "/rerank"
        self.model = endpoint.model
        self._key = endpoint.api_key
        self.timeout_s = timeout_s
        self.record = record
        self._client = httpx.AsyncClient(transport=transport)

    @property
    def reranker_id(self) -> str:
        return f"api-{self.model}"

    async def scores(
        self, query: str, documents: Sequence[str], *, scope: str | None = None
    ) -> list[float]:
        """One score per document, in their order (higher: more relevant)."""
        if not documents:
            return []
        done = timed(self.record, "rerank", self.model, scope)
        try:
            try:
                payload = await self._post(query, documents)
            except Refused as exc:
                if not (self._auto and exc.status in (400, 422) and "texts" in str(exc)):
                    raise
                self.shape, self._auto = "tei", False
                payload = await self._post(query, documents)
            found = parse_scores(payload, len(documents))
        except BaseException as exc:  # cancelled by the wake's deadline too
            done(exc, 0)
            raise
        done(None, usage_tokens(payload))
        return found

    async def _post(self, query: str, documents: Sequence[str]) -> Any:
        return await apost_json(
            self._client,
            self.url,
            request_body(self.shape, self.model, query, documents),
            api_key=self._key,
            timeout_s=self.timeout_s,
        )

    async def aclose(self) -> None:
        await self._client.aclose()


def request_body(
    shape: RerankFormat, model: str, query: str, documents: Sequence[str]
) -> dict[str, Any]:
    docs = list(documents)
    if shape == "tei":
        return {"query": query, "texts": docs, "raw_scores": False, "truncate": True}
    if shape == "dashscope":
        return {
            "model": model,
            "input": {"query": query, "documents": docs},
            "parameters": {"top_n": len(docs), "return_documents": False},
        }
    return {
        "model": model,
        "query": query,
        "documents": docs,
        "top_n": len(docs),
        "return_documents": False,
    }


def parse_scores(payload: Any, count: int) -> list[float]:
    """Every document's score by its index; anything less is garbage."""
    results: Any = payload
    if isinstance(payload, dict):
        output = payload.get("output")
        results = payload.get(
            "results", output.get("results") if isinstance(output, dict) else None
        )
    if not isinstance(results, list):
        raise LLMBadResponse("rerank answer holds no list of results")
    scores: dict[int, float] = {}
    for item in results:
        if not isinstance(item, dict):
            raise LLMBadResponse("rerank answer holds a result that is not an object")
        index, score = item.get("index"), item.get("relevance_score", item.get("score"))
        if not isinstance(index, int) or not 0 <= index < count:
            raise LLMBadResponse(f"rerank answer names document {index!r} of {count}")
        if (
            not isinstance(score, int | float)
            or isinstance(score, bool)
            or not math.isfinite(score)
        ):
            raise LLMBadResponse(f"rerank answer scores document {index} with {score!r}")
        scores[index] = float(score)
    if len(scores) != count:
        raise LLMBadResponse(f"rerank answer scores {len(scores)} of {count} documents")
    return [scores[i] for i in range(count)]
