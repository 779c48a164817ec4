"""The shipped relevance weights come from the training corpus, reproducibly.

Running the training script again on training/corpus/ gives the shipped files: the
same features and embedder, and weights and operating points within a small tolerance
(the embedding model's float arithmetic may differ in the last bits across CPUs).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory_core.eval.training import train_files
from memory_core.recall import relevance

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


async def test_training_again_reproduces_the_shipped_weights() -> None:
    for trained in await train_files(CORPUS):
        shipped = relevance.load(trained.embedder)
        assert trained.features == shipped.features
        assert trained.meta["trained_on"] == shipped.meta["trained_on"]
        for name in ("mean", "scale", "weights"):
            assert np.allclose(getattr(trained, name), getattr(shipped, name), atol=TOLERANCE), name
        for name in ("bias", "floor", "sure"):
            assert abs(getattr(trained, name) - getattr(shipped, name)) <= TOLERANCE, name
