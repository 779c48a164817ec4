"""The shipped relevance weights come from the training corpus, reproducibly.

Training again on training/corpus/ gives the shipped files: the same features,
embedder and candidates, and weights and operating points within the float arithmetic
of the CPU (`TOLERANCE`). The rows come from the corpus's kept vectors
(training/vectors/, memory_core/vectors/kept.py), which the embedder must still give:
its own arithmetic differs from CPU to CPU by far more than the fit may.

Featurising the whole corpus takes minutes, so the suite checks it in two parts that
together catch a shipped file out of step with the corpus or the code:

- the corpus: every file's hash is the one the weights were trained on (`trained_on`),
  and the weights use the features the code has for their embedder;
- the code: the reproduction check the training run stored (`meta.reproduce`, the fit
  on one chat of every file, memory_core/eval/training.py) comes out again from the
  code as it is. Whatever turns a chat into features (the loader, the recall path up to
  `explain`, the embedder, the features) or features into weights and operating points
  changes it, as it would change the full fit.

The full retrain and comparison (minutes) is `python training/train_relevance.py
--check`, a step of its own in .ci/run.
"""

from __future__ import annotations

from pathlib import Path

from memory_core.eval.training import (
    TOLERANCE,
    check_models,
    differences,
    features_for,
    reproduced,
    source_name,
)
from memory_core.recall.relevance import RelevanceModel
from memory_core.vectors.e5 import E5Embedder
from memory_core.vectors.fake import NudgedEmbedder
from memory_core.vectors.kept import AGREEMENT, KeptEmbedder, KeptVectors, kept_file

ROOT = Path(__file__).resolve().parents[3]
CORPUS = sorted((ROOT / "training" / "corpus").glob("*.json"))


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
    assert differences(trained, shipped, TOLERANCE) == []


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


async def test_the_stored_reproduction_check_comes_out_again_whatever_the_cpu() -> None:
    """The embedder's output moved by +-1e-4 in every component (another CPU's
    arithmetic; two seen differ by up to 1.6e-3) changes nothing the check compares."""
    shipped = shipped_models()
    model = NudgedEmbedder(E5Embedder(), 1e-4)
    kept = KeptVectors.load(
        kept_file(ROOT / "training" / "vectors", model.model_id), model.model_id
    )
    embedder = KeptEmbedder(kept, model, grow=False)
    trained = await check_models(CORPUS, embedder=embedder)
    assert AGREEMENT <= embedder.agreement < 1.0
    assert sorted(m.embedder for m in trained) == sorted(shipped)
    for model in trained:
        kept = shipped[model.embedder].meta.get("reproduce")
        assert kept, "no reproduction check in the weights: python training/train_relevance.py"
        assert_same(model, reproduced(kept))


def test_differences_name_what_moved_beyond_the_tolerance() -> None:
    from dataclasses import replace

    shipped = next(iter(shipped_models().values()))
    assert differences(shipped, shipped, TOLERANCE) == []
    nudged = shipped.weights.copy()
    nudged[0] += 10 * TOLERANCE
    assert differences(replace(shipped, weights=nudged), shipped, TOLERANCE) == ["weights"]
    moved = replace(shipped, sure=shipped.sure + 0.1, floor=shipped.floor + TOLERANCE / 2)
    assert differences(moved, shipped, TOLERANCE) == ["sure"]
