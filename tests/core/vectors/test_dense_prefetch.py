"""The question's vector is computed once, from the moment recall knows the question:
a prefetch and the later asks share one embedding, and a failed one is not lost."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import numpy as np
import pytest

from memory_core.errors import LLMError
from memory_core.settings import Settings
from memory_core.vectors.dense import Dense
from memory_core.vectors.embedder import Matrix
from memory_core.vectors.fake import FakeEmbedder
from memory_core.vectors.store import VectorIndex


class GatedEmbedder(FakeEmbedder):
    """Holds every query until `release` is set (in the worker thread), then answers
    (or fails with LLMError when `fail`)."""

    def __init__(self, *, fail: bool = False) -> None:
        super().__init__()
        self.release = threading.Event()
        self.fail = fail
        self.queries: list[str] = []

    def embed_query(self, text: str) -> Matrix:
        self.queries.append(text)
        assert self.release.wait(10)
        if self.fail:
            raise LLMError("the provider answered 500")
        return super().embed_query(text)


def dense(tmp_path: Path, embedder: FakeEmbedder) -> Dense:
    d = Dense(Settings(data_dir=tmp_path), embedder=embedder)
    # As once the index was read: an empty one of this model.
    empty = np.zeros((0, embedder.dim), dtype=np.float32)
    d._index = VectorIndex(embedder.model_id, embedder.dim, (), empty)  # pyright: ignore[reportPrivateUsage]
    return d


async def test_a_prefetched_question_is_embedded_once_for_every_ask(tmp_path: Path) -> None:
    embedder = GatedEmbedder()
    d = dense(tmp_path, embedder)
    d.prefetch("小明最近在忙什么")
    d.prefetch("小明最近在忙什么")  # a second prefetch of the same text starts nothing
    asks = [asyncio.create_task(d.question("小明最近在忙什么")) for _ in range(3)]
    await asyncio.sleep(0.05)
    assert not any(a.done() for a in asks)  # all wait on the one embedding
    embedder.release.set()
    vectors = await asyncio.gather(*asks)
    assert embedder.queries == ["小明最近在忙什么"]
    assert all((v[0] == vectors[0][0]).all() for v in vectors)
    # Kept: asked again later, nothing is embedded.
    await d.question("小明最近在忙什么")
    assert embedder.queries == ["小明最近在忙什么"]


async def test_a_failed_prefetch_is_raised_to_the_ask_and_not_retried_at_once(
    tmp_path: Path,
) -> None:
    embedder = GatedEmbedder(fail=True)
    d = dense(tmp_path, embedder)
    d.prefetch("阿杰换工作了吗")
    embedder.release.set()
    with pytest.raises(LLMError):
        await d.question("阿杰换工作了吗")
    with pytest.raises(TimeoutError):  # just failed: not sent again for a while
        await d.question("阿杰换工作了吗")
    d.prefetch("阿杰换工作了吗")  # nor by a prefetch
    assert embedder.queries == ["阿杰换工作了吗"]


async def test_nothing_is_prefetched_before_an_index_was_read(tmp_path: Path) -> None:
    embedder = GatedEmbedder()
    d = Dense(Settings(data_dir=tmp_path), embedder=embedder)
    d.prefetch("小明最近在忙什么")  # no index: a provider would be paid for nothing
    await asyncio.sleep(0.05)
    assert embedder.queries == []


async def test_a_cancelled_ask_leaves_the_embedding_to_finish(tmp_path: Path) -> None:
    embedder = GatedEmbedder()
    d = dense(tmp_path, embedder)
    ask = asyncio.create_task(d.question("周末去哪玩"))
    await asyncio.sleep(0.05)
    ask.cancel()
    with pytest.raises(asyncio.CancelledError):
        await ask
    embedder.release.set()
    again = await d.question("周末去哪玩")
    assert len(again[0]) == embedder.dim
    assert embedder.queries == ["周末去哪玩"]
