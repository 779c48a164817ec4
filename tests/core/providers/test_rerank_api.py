"""The rerank API client against a real loopback server, in each request shape."""

from __future__ import annotations

import math

import pytest

from memory_core.errors import LLMBadResponse, LLMTimeout, LLMUnavailable
from memory_core.providers import ApiReranker
from memory_core.providers.rerank_api import parse_scores, request_body
from memory_core.providers.usage import Call
from memory_core.settings import ModelEndpoint
from tests.fakes.provider_server import Fault, ProviderServer, bigram_share, provider_server

__all__ = ["provider_server"]

DOCS = ["小明从九月开始学吉他", "小红喜欢吃火锅", "小明的吉他是雅马哈的"]
QUERY = "小明什么时候开始学吉他"


async def test_the_documents_shape_gets_a_score_per_document_in_order(
    provider_server: ProviderServer,
) -> None:
    calls: list[Call] = []
    api = ApiReranker(
        ModelEndpoint(provider_server.base_url, "k", "BAAI/bge-reranker-v2-m3"), record=calls.append
    )
    try:
        got = await api.scores(QUERY, DOCS, scope="group:1")
    finally:
        await api.aclose()
    assert got == pytest.approx([bigram_share(QUERY, d) for d in DOCS])
    request = provider_server.requests[0]
    assert request.path == "/v1/rerank"
    assert request.body["documents"] == DOCS
    assert request.body["top_n"] == 3
    assert request.authorization == "Bearer k"
    assert [(c.job, c.outcome, c.scope) for c in calls] == [("rerank", "ok", "group:1")]
    assert calls[0].tokens > 0
    assert api.reranker_id == "api-BAAI/bge-reranker-v2-m3"


async def test_tei_is_found_by_its_refusal_and_kept(provider_server: ProviderServer) -> None:
    api = ApiReranker(ModelEndpoint(provider_server.root_url, "", "bge"))
    try:
        first = await api.scores(QUERY, DOCS)
        second = await api.scores(QUERY, DOCS[:1])
    finally:
        await api.aclose()
    assert first == pytest.approx([bigram_share(QUERY, d) for d in DOCS])
    assert second == pytest.approx(first[:1])
    assert provider_server.paths() == ["/rerank", "/rerank", "/rerank"]
    assert "texts" in provider_server.requests[-1].body
    assert api.shape == "tei"
    assert request_body("dashscope", "gte-rerank", "q", ["a"])["input"] == {
        "query": "q",
        "documents": ["a"],
    }


def test_every_answer_shape_parses_and_garbage_is_refused() -> None:
    dashscope = {
        "output": {
            "results": [{"index": 1, "relevance_score": 0.2}, {"index": 0, "relevance_score": 0.9}]
        }
    }
    assert parse_scores(dashscope, 2) == [0.9, 0.2]
    assert parse_scores([{"index": 0, "score": 0.5}], 1) == [0.5]
    for garbage in (
        {"results": [{"index": 0, "relevance_score": 0.1}]},  # one of two
        {"results": [{"index": 5, "relevance_score": 0.1}, {"index": 0, "relevance_score": 1}]},
        {
            "results": [
                {"index": 0, "relevance_score": math.nan},
                {"index": 1, "relevance_score": 1},
            ]
        },
        {"results": [{"index": 0, "relevance_score": "high"}, {"index": 1, "relevance_score": 1}]},
        {"data": []},
        "not an object",
    ):
        with pytest.raises(LLMBadResponse):
            parse_scores(garbage, 2)


async def test_a_wake_makes_one_attempt_and_names_what_went_wrong(
    provider_server: ProviderServer,
) -> None:
    calls: list[Call] = []
    api = ApiReranker(
        ModelEndpoint(provider_server.base_url, "", "m"), timeout_s=0.3, record=calls.append
    )
    provider_server.push(Fault.error(500), Fault.garbage(), Fault.slow(1.5), Fault.error(429))
    try:
        with pytest.raises(LLMUnavailable, match="HTTP 500"):
            await api.scores(QUERY, DOCS)
        with pytest.raises(LLMBadResponse):
            await api.scores(QUERY, DOCS)
        with pytest.raises(LLMTimeout):
            await api.scores(QUERY, DOCS)
    finally:
        await api.aclose()
    assert [c.outcome for c in calls] == ["unavailable", "bad_response", "timeout"]
