from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory_core.errors import ConfigError
from memory_core.vectors.embedder import Embedder
from memory_core.vectors.onnx_embedder import OnnxEmbedder

from .tiny_onnx import DIM, build_tiny_model, expected_vector


def test_cls_pooling_and_unit_length(tmp_path: Path) -> None:
    tables = build_tiny_model(tmp_path)
    embedder = OnnxEmbedder(tmp_path)
    assert not embedder.loaded
    vectors = embedder.embed(["小明学吉他", "老周儿子出生"])
    assert embedder.loaded
    assert vectors.shape == (2, DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(
        vectors[0], expected_vector(tmp_path, tables, "小明学吉他"), atol=1e-5
    )
    np.testing.assert_allclose(
        vectors[1], expected_vector(tmp_path, tables, "老周儿子出生"), atol=1e-5
    )
    assert embedder.dim == DIM
    assert isinstance(embedder, Embedder)


def test_padding_in_a_batch_does_not_change_a_vector(tmp_path: Path) -> None:
    build_tiny_model(tmp_path)
    embedder = OnnxEmbedder(tmp_path)
    alone = embedder.embed(["猫粮"])[0]
    batched = embedder.embed(["今天天气不错小明学吉他", "猫粮"])[1]
    np.testing.assert_allclose(alone, batched, atol=1e-6)


def test_token_type_ids_are_fed_when_the_model_declares_them(tmp_path: Path) -> None:
    tables = build_tiny_model(tmp_path, with_token_types=True)
    vector = OnnxEmbedder(tmp_path).embed(["考试"])[0]
    np.testing.assert_allclose(vector, expected_vector(tmp_path, tables, "考试"), atol=1e-5)


def test_model_id_follows_the_weights(tmp_path: Path) -> None:
    build_tiny_model(tmp_path / "a", seed=1)
    build_tiny_model(tmp_path / "b", seed=2)
    a, b = OnnxEmbedder(tmp_path / "a"), OnnxEmbedder(tmp_path / "b")
    assert a.model_id != b.model_id
    assert a.model_id == OnnxEmbedder(tmp_path / "a").model_id


def test_a_folder_without_the_model_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model\.onnx"):
        OnnxEmbedder(tmp_path)
