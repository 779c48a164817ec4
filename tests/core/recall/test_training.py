"""The shipped relevance weights come from the training corpus, reproducibly.

Training again on training/corpus/ gives the shipped files: the same features and
embedder, and weights and operating points within a small tolerance (the embedding
model's float arithmetic may differ in the last bits across CPUs).

Featurising the whole corpus takes minutes, so the suite checks it in two parts that
together catch a shipped file out of step with the corpus or the code:

- the corpus: every file's hash is the one the weights were trained on (`trained_on`),
  and the weights use the features the code has for their embedder;
- the code: the reproduction check the training run stored (`meta.reproduce`, the fit
  on one chat of every file, memory_core/eval/training.py) comes out again from the
  code as it is. Whatever turns a chat into features (the loader, the recall path up to
  `explain`, the embedder, the features) or features into weights and operating points
  changes it, as it would change the full fit.

`YUJI_TRAINING_FULL=1` also retrains on the whole corpus and compares everything
(minutes; worth it after a refit).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from memory_core.eval.training import (
    check_models,
    features_for,
    reproduced,
    source_name,
    train_files,
)
from memory_core.recall import relevance
from memory_core.recall.relevance import RelevanceModel

ROOT = Path(__file__).resolve().parents[3]
CORPUS = sorted((ROOT / "training" / "corpus").glob("*.json"))
TOLERANCE = 1e-3


def test_the_corpus_is_large_enough_and_says_where_it_comes_from() -> None:
    import json

    questions = negatives = 0
    chats: set[str] = set()
    for path in CORPUS:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert "source" in data
        assert "evaluation" in data["source"]
        chats.update(s["id"] for s in data["scopes"])
        questions += len(data["queries"])
        negatives += sum(q["tier"] == "negative" for q in data["queries"])
    assert len(chats) >= 8
    assert questions >= 800
    assert negatives >= 250


def assert_same(trained: RelevanceModel, shipped: RelevanceModel) -> None:
    assert trained.embedder == shipped.embedder
    assert trained.features == shipped.features
    assert trained.meta["trained_on"] == shipped.meta["trained_on"]
    for name in ("mean", "scale", "weights"):
        assert np.allclose(getattr(trained, name), getattr(shipped, name), atol=TOLERANCE), name
    for name in ("bias", "floor", "sure"):
        assert abs(getattr(trained, name) - getattr(shipped, name)) <= TOLERANCE, name
    assert trained.chatter is not None
    assert shipped.chatter is not None
    for name in ("mean", "scale", "weights"):
        got, kept = getattr(trained.chatter, name), getattr(shipped.chatter, name)
        assert np.allclose(got, kept, atol=TOLERANCE), f"chatter {name}"
    for name in ("bias", "line"):
        got, kept = getattr(trained.chatter, name), getattr(shipped.chatter, name)
        assert abs(got - kept) <= TOLERANCE, f"chatter {name}"


def shipped_models() -> dict[str, RelevanceModel]:
    """Every weights file under memory_core/recall/data/, by embedder."""
    files = sorted((ROOT / "memory_core" / "recall" / "data").glob("relevance-*.json"))
    models = [RelevanceModel.from_json(f.read_text(encoding="utf-8")) for f in files]
    assert len(models) >= 2
    return {m.embedder: m for m in models}


def test_the_shipped_weights_were_trained_on_this_corpus_with_these_features() -> None:
    sources = [source_name(p) for p in CORPUS]
    for shipped in shipped_models().values():
        assert shipped.meta["trained_on"] == sources, "the corpus changed: refit the weights"
        assert shipped.features == features_for(shipped.embedder)


async def test_the_stored_reproduction_check_comes_out_again() -> None:
    shipped = shipped_models()
    trained = await check_models(CORPUS)
    assert sorted(m.embedder for m in trained) == sorted(shipped)
    for model in trained:
        kept = shipped[model.embedder].meta.get("reproduce")
        assert kept, "no reproduction check in the weights: python training/train_relevance.py"
        assert_same(model, reproduced(kept))


@pytest.mark.skipif(
    not os.environ.get("YUJI_TRAINING_FULL"), reason="minutes; YUJI_TRAINING_FULL=1 runs it"
)
async def test_training_again_reproduces_the_shipped_weights() -> None:
    for trained in await train_files(CORPUS):
        shipped = relevance.load(trained.embedder)
        assert_same(trained, shipped)
        assert_same(reproduced(trained.meta["reproduce"]), reproduced(shipped.meta["reproduce"]))
