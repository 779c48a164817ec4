"""The embedder the settings ask for: an embeddings API, an ONNX model folder, or the
bundled e5-small."""

from __future__ import annotations

from memory_core.providers import Record, api_embedder
from memory_core.settings import Settings

from .e5 import E5Embedder
from .embedder import Embedder
from .onnx_embedder import OnnxEmbedder


def embedder_from_settings(settings: Settings, record: Record | None = None) -> Embedder:
    """Constructs the embedder; its weights load on the first `embed`, not here.
    `record`: where an API embedder reports its calls (llm_usage)."""
    api = api_embedder(settings, record)
    if api is not None:
        return api
    if settings.vector_model_path:
        return OnnxEmbedder(settings.vector_model_path)
    return E5Embedder()
