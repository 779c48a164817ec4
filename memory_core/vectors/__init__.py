"""The vector side path: embedders, the index file, the gate (SPEC.md §8.5)."""

from .build import EmbedReport as EmbedReport
from .build import sync_index as sync_index
from .embedder import Calibration as Calibration
from .embedder import Embedder as Embedder
from .fake import FakeEmbedder as FakeEmbedder
from .onnx_embedder import OnnxEmbedder as OnnxEmbedder
from .side_path import VectorSide as VectorSide
from .use import UseEmbedder as UseEmbedder
from .worker import needs_embedding as needs_embedding
from .worker import run_embed_process as run_embed_process

__all__ = [
    "Calibration",
    "EmbedReport",
    "Embedder",
    "FakeEmbedder",
    "OnnxEmbedder",
    "UseEmbedder",
    "VectorSide",
    "needs_embedding",
    "run_embed_process",
    "sync_index",
]
