"""The embedder the settings ask for: the bundled USE, or an ONNX model folder."""

from __future__ import annotations

from memory_core.settings import Settings

from .embedder import Calibration, Embedder
from .onnx_embedder import OnnxEmbedder
from .use import UseEmbedder


def embedder_from_settings(settings: Settings) -> Embedder:
    """Constructs the embedder; its weights load on the first `embed`, not here."""
    if settings.vector_model_path:
        return OnnxEmbedder(settings.vector_model_path)
    return UseEmbedder()


def calibration_for(settings: Settings, embedder: Embedder) -> Calibration:
    """The model's calibrated operating point, each part overridable by a setting
    (a negative setting means "the model's own")."""
    default = embedder.calibration
    return Calibration(
        threshold=settings.vector_threshold
        if settings.vector_threshold >= 0
        else default.threshold,
        margin=settings.vector_margin if settings.vector_margin >= 0 else default.margin,
    )
