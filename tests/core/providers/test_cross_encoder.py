"""The local cross-encoder: a real ONNX model built here, loaded, tokenised as pairs and
run for real on one thread."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory_core.errors import ConfigError, LLMBadResponse
from memory_core.providers import CrossEncoder
from memory_core.providers.cross_encoder import head_scores
from memory_core.providers.usage import Call

from .tiny_cross_encoder import build_cross_encoder, expected_score

QUERY = "小明什么时候开始学吉他"
DOCS = ["小明从九月开始学吉他", "小红喜欢吃火锅", "小明的吉他是雅马哈的"]


async def test_pairs_are_scored_as_the_model_computes_them(tmp_path: Path) -> None:
    folder = tmp_path / "reranker"
    weights = build_cross_encoder(folder)
    calls: list[Call] = []
    model = CrossEncoder(folder, record=calls.append)
    got = await model.scores(QUERY, DOCS)
    want = [expected_score(folder, weights, QUERY, d) for d in DOCS]
    assert got == pytest.approx(want, abs=1e-5)
    assert len(set(np.round(got, 4))) == 3  # the documents are told apart
    assert model._session.get_session_options().intra_op_num_threads == 1
    assert [(c.job, c.outcome) for c in calls] == [("rerank", "ok")]
    assert calls[0].tokens > len(QUERY) * 3  # the question is read with every memory
    assert model.reranker_id.startswith("onnx-reranker-")
    assert CrossEncoder(folder).reranker_id == model.reranker_id


def test_a_folder_without_its_files_is_refused_and_heads_are_read(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"lacks model\.onnx"):
        CrossEncoder(tmp_path)
    two = head_scores(np.array([[0.0, 0.0], [0.0, 2.0]]), 2)
    assert two == pytest.approx([0.5, 1 / (1 + np.exp(-2.0))])
    with pytest.raises(LLMBadResponse):
        head_scores(np.array([[0.0, 1.0, 2.0]]), 1)
