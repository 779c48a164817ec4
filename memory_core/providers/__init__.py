"""Recall models from providers: embeddings and a reranker over HTTP APIs, or a local
cross-encoder (docs/providers.md). Each call is counted in `llm_usage` (jobs `embed`
and `rerank`)."""

from __future__ import annotations

from memory_core.settings import Settings

from .cross_encoder import CrossEncoder as CrossEncoder
from .embeddings import ApiEmbedder as ApiEmbedder
from .rerank_api import ApiReranker as ApiReranker
from .usage import Record as Record
from .usage import ThreadedUsage as ThreadedUsage


def api_embedder(settings: Settings, record: Record | None = None) -> ApiEmbedder | None:
    """The embeddings API the settings name (None: a local model embeds)."""
    endpoint = settings.embed_api
    if endpoint is None:
        return None
    return ApiEmbedder(
        endpoint,
        batch=settings.embed_batch,
        query_timeout_s=settings.embed_timeout_s,
        record=record,
    )


def reranker_id(settings: Settings) -> str | None:
    """The configured reranker's id (what its weights are calibrated for), or None."""
    endpoint = settings.rerank_api
    if endpoint is not None:
        return f"api-{endpoint.model}"
    if settings.rerank_model_path:
        return CrossEncoder(settings.rerank_model_path).reranker_id
    return None


def reranker_from_settings(
    settings: Settings, record: Record | None = None
) -> ApiReranker | CrossEncoder | None:
    """The reranker the settings name: an API, else a local cross-encoder, else None."""
    endpoint = settings.rerank_api
    if endpoint is not None:
        return ApiReranker(
            endpoint,
            shape=settings.rerank_format,
            timeout_s=settings.rerank_timeout_s,
            record=record,
        )
    if settings.rerank_model_path:
        return CrossEncoder(settings.rerank_model_path, record=record)
    return None


__all__ = [
    "ApiEmbedder",
    "ApiReranker",
    "CrossEncoder",
    "Record",
    "ThreadedUsage",
    "api_embedder",
    "reranker_from_settings",
    "reranker_id",
]
