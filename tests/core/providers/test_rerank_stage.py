"""The reranker in recall: its score decides through the weights calibrated for the
pair; without one, or when it fails, the bands are exactly those of today's path."""

from __future__ import annotations

from pathlib import Path

from memory_core import Settings
from memory_core.ops.alerts import RecordingAlertSink
from memory_core.recall.relevance import LEXICAL
from memory_core.types import RecallResult
from tests.core.relevance_models import LEXICAL_MODEL
from tests.fakes.provider_server import Fault, ProviderServer, provider_server

from .helpers import G1, open_core, reranked, write, write_calibration
from .tiny_cross_encoder import build_cross_encoder

__all__ = ["provider_server"]

QUESTION = "小明什么时候开始学吉他"


def shown(result: RecallResult) -> list[tuple[int, str, float]]:
    return [(r.memory.id, r.band, r.score) for r in result.items]


async def test_the_reranker_decides_and_a_failure_keeps_the_bands(
    tmp_path: Path, provider_server: ProviderServer
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        vector_mode="off",
        rerank_base_url=provider_server.base_url,
        rerank_model="r",
        rerank_timeout_s=0.4,
    )
    write_calibration(settings.calibration_path, reranked(LEXICAL, "api-r"))
    sink = RecordingAlertSink()
    core = await open_core(settings, lexical_relevance=LEXICAL_MODEL, alert_sink=sink)
    try:
        core.recall.check()
        answer = await write(core, "小明从九月开始学吉他")
        other = await write(core, "小明的吉他是雅马哈的，很贵")
        provider_server.score = lambda q, d: 0.99 if "九月" in d else 0.05
        got = await core.recall.recall(G1, QUESTION)
        assert (got.items[0].memory.id, got.items[0].band) == (answer, "sure")
        assert other not in [r.memory.id for r in got.items if r.band == "sure"]
        assert got.items[0].why[0][0] == "rerank"
        assert any(line.startswith("reranker api-r: 2 candidates") for line in got.trace)
        assert provider_server.requests[-1].body["query"] == QUESTION

        stage, core.recall.rerank = core.recall.rerank, None
        without = await core.recall.recall(G1, QUESTION)  # today's path
        core.recall.rerank = stage
        assert shown(without) != shown(got)
        provider_server.push(Fault.error(500), Fault.garbage(), Fault.slow(1.5))
        for _ in range(3):
            failed = await core.recall.recall(G1, QUESTION)
            assert shown(failed) == shown(without)
            assert any("reranker failed" in line for line in failed.trace)
        assert stage is not None
        assert stage.failures == 3
        assert len([k for k, _ in sink.fired if k == "recall-reranker"]) == 1  # once an hour
        await core.provider_usage.drain()
        usage = (await core.usage.summary())["today"]["rerank"]
        assert (usage["calls"], usage["failed"]) == (4, 3)
        line = (await core.backend()).lines()["回忆模型"]
        assert "重排 api-r（今天 4 次、失败 3 次、" in line
        assert line.endswith("启动以来失败 3 次）")
    finally:
        await core.close()


async def test_a_local_cross_encoder_reads_the_candidates(tmp_path: Path) -> None:
    folder = tmp_path / "ce"
    build_cross_encoder(folder)
    settings = Settings(
        data_dir=tmp_path / "data", vector_mode="off", rerank_model_path=str(folder)
    )
    core = await open_core(settings, lexical_relevance=LEXICAL_MODEL)
    try:
        assert core.recall.rerank is not None
        write_calibration(
            settings.calibration_path, reranked(LEXICAL, core.recall.rerank.reranker_id)
        )
        await write(core, "小明从九月开始学吉他")
        got = await core.recall.recall(G1, QUESTION)
        assert got.items
        assert any(line.startswith("reranker onnx-ce-") for line in got.trace)
        assert "rerank" in dict(got.items[0].why)
    finally:
        await core.close()


async def test_chatter_is_not_sent_and_no_reranker_means_no_column(
    tmp_path: Path, provider_server: ProviderServer
) -> None:
    settings = Settings(data_dir=tmp_path / "data", vector_mode="off")
    core = await open_core(settings, lexical_relevance=LEXICAL_MODEL)
    try:
        await write(core, "小明从九月开始学吉他")
        got = await core.recall.recall(G1, QUESTION)
        assert core.recall.rerank is None
        assert not any("reranker" in line for line in got.trace)
        assert all(name != "rerank" for r in got.items for name, _ in r.why)
    finally:
        await core.close()
    assert provider_server.requests == []
