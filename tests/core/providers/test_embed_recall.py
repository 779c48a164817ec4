"""Recall with an embeddings API: vectors per model, usage counted, a slow question
answered by words (and the trace says so), a changed model answered by words until
its vectors are complete and by meaning again at once after."""

from __future__ import annotations

from pathlib import Path

from memory_core import Settings, Yuji
from memory_core.vectors import sync_index
from tests.core.relevance_models import LEXICAL_MODEL, hand_model
from tests.fakes.provider_server import ProviderServer, provider_server

from .helpers import G1, open_core, write

__all__ = ["provider_server"]

QUESTION = "小明学吉他吗"


def dense_count(trace: tuple[str, ...]) -> int:
    line = next(t for t in trace if t.startswith("candidates:"))
    return int(line.rsplit("dense ", 1)[1])


async def opened(settings: Settings, model: str) -> Yuji:
    return await open_core(
        settings, relevance=hand_model(f"api-{model}"), lexical_relevance=LEXICAL_MODEL
    )


async def test_recall_by_an_embeddings_api_across_a_model_change(
    tmp_path: Path, provider_server: ProviderServer
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        embed_base_url=provider_server.base_url,
        embed_model="a",
        embed_timeout_s=0.3,
    )
    core = await opened(settings, "a")
    try:
        target = await write(core, "小明从九月开始学吉他")
        await write(core, "小红喜欢吃火锅", subject="小红")
        assert core.vectors is not None
        report = await sync_index(core.memory_repo, core.vectors.embedder, core.vector_place)
        assert (report.model_id, report.embedded) == ("api-a", 2)
        assert len(provider_server.requests) == 1  # every text of the build in one batch
        got = await core.recall.recall(G1, QUESTION)
        assert target in [r.memory.id for r in got.items]
        assert dense_count(got.trace) == 2
        await core.provider_usage.drain()
        embed = (await core.usage.summary())["today"]["embed"]
        assert embed["calls"] >= 3  # the memories (one text each), the background, the question
        assert embed["prompt_tokens"] > 0
        line = (await core.backend()).lines()["回忆模型"]  # /status and the console
        assert line.startswith("向量 api-a（今天 ")
        assert line.endswith("；重排 无")

        provider_server.delay_s = 1.0  # slower than the question may wait
        slow = await core.recall.recall(G1, "小明的吉他")
        provider_server.delay_s = 0.0
        assert any("took over 0.3s: words only" in line for line in slow.trace)
        assert target in [r.memory.id for r in slow.items]  # answered by words
    finally:
        await core.close()

    changed = settings.with_changes(embed_model="b")
    core = await opened(changed, "b")
    try:
        meanwhile = await core.recall.recall(G1, QUESTION)
        assert target in [r.memory.id for r in meanwhile.items]  # no gap: words answer
        assert any(
            "no vectors of api-b yet (being built): words only" in t for t in meanwhile.trace
        )
        assert core.vectors is not None
        await sync_index(core.memory_repo, core.vectors.embedder, core.vector_place)
        after = await core.recall.recall(G1, QUESTION)
        assert dense_count(after.trace) == 2
        assert not any("words only" in t for t in after.trace)
        folders = sorted(p.name for p in changed.vectors_dir.iterdir())
        assert folders == ["api-a", "api-b"]  # vectors per model, the old ones kept
    finally:
        await core.close()
