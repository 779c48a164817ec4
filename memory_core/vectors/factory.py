"""The embedder the settings ask for: the bundled e5-small, or an ONNX model folder."""

from __future__ import annotations

from memory_core.settings import Settings

from .e5 import E5Embedder
from .embedder import Embedder
from .onnx_embedder import OnnxEmbedder


def embedder_from_settings(settings: Settings) -> Embedder:
    """Constructs the embedder; its weights load on the first `embed`, not here."""
    if settings.vector_model_path:
        return OnnxEmbedder(settings.vector_model_path)
    return E5Embedder()
