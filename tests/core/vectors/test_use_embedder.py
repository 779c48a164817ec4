"""The bundled default model: loads from the package, offline, once."""

from __future__ import annotations

import numpy as np

from memory_core import Settings
from memory_core.vectors import UseEmbedder
from memory_core.vectors.embedder import Embedder
from memory_core.vectors.factory import embedder_from_settings


def test_bundled_use_embeds_unit_vectors_and_ranks_meaning() -> None:
    embedder = UseEmbedder()
    assert isinstance(embedder, Embedder)
    assert not embedder.loaded
    vectors = embedder.embed(["小明从九月开始学吉他", "小明在学什么乐器", "今天的股市大跌"])
    assert embedder.loaded
    assert vectors.shape == (3, 512)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    # Deterministic: the same text alone gives the same bytes every time.
    again = embedder.embed(["小明在学什么乐器"])[0]
    assert np.array_equal(again, embedder.embed(["小明在学什么乐器"])[0])
    assert embedder.model_id == "use-multilingual-v3@0.2.1"


def test_settings_choose_the_model() -> None:
    assert isinstance(embedder_from_settings(Settings()), UseEmbedder)
