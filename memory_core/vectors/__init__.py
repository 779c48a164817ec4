"""Dense retrieval: embedders, the index beside the database (docs/design.md#dense-retrieval)."""

from .build import EmbedReport as EmbedReport
from .build import sync_index as sync_index
from .dense import Dense as Dense
from .e5 import E5Embedder as E5Embedder
from .embedder import Embedder as Embedder
from .fake import FakeEmbedder as FakeEmbedder
from .onnx_embedder import OnnxEmbedder as OnnxEmbedder
from .worker import needs_embedding as needs_embedding
from .worker import run_embed_process as run_embed_process

__all__ = [
    "Dense",
    "E5Embedder",
    "EmbedReport",
    "Embedder",
    "FakeEmbedder",
    "OnnxEmbedder",
    "needs_embedding",
    "run_embed_process",
    "sync_index",
]
