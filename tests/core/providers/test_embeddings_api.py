"""The embeddings API client against a real loopback server: batches, retries that
honour Retry-After, and every failure named and counted."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import numpy as np
import pytest

from memory_core.errors import LLMBadResponse, LLMRateLimited, LLMTimeout, LLMUnavailable
from memory_core.providers import ApiEmbedder
from memory_core.providers.http import post_json
from memory_core.providers.usage import Call
from memory_core.settings import ModelEndpoint
from tests.fakes.provider_server import Fault, ProviderServer, hashed_vector, provider_server


@contextmanager
def embedder(server: ProviderServer, calls: list[Call], **kwargs: float) -> Iterator[ApiEmbedder]:
    endpoint = ModelEndpoint(server.base_url, "secret-key", "BAAI/bge-m3")
    api = ApiEmbedder(endpoint, batch=4, record=calls.append, retries=2, **kwargs)  # type: ignore[arg-type]
    try:
        yield api
    finally:
        api.close()


__all__ = ["provider_server"]


def test_memory_texts_go_in_batches_and_come_back_unit_length(
    provider_server: ProviderServer,
) -> None:
    calls: list[Call] = []
    with embedder(provider_server, calls) as api:
        texts = [f"第{i}条记忆：小明学吉他" for i in range(10)]
        matrix = api.embed(texts)
        assert matrix.shape == (10, 32)
        assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-6)
        want = np.asarray(hashed_vector(texts[7]))
        assert np.allclose(matrix[7], want / np.linalg.norm(want), atol=1e-6)
        assert [len(r.body["input"]) for r in provider_server.requests] == [4, 4, 2]
        assert {r.body["model"] for r in provider_server.requests} == {"BAAI/bge-m3"}
        assert provider_server.requests[0].authorization == "Bearer secret-key"
        assert [(c.job, c.outcome) for c in calls] == [("embed", "ok")] * 3
        assert calls[0].tokens == sum(len(t) for t in texts[:4])
        assert api.model_id == "api-BAAI/bge-m3"
        assert api.dim == 32
        assert api.embed_query("小明").shape == (32,)


def test_429_and_5xx_are_retried_honouring_retry_after(provider_server: ProviderServer) -> None:
    provider_server.push(Fault.error(429, retry_after="0.3"), Fault.error(503))
    slept: list[float] = []
    with httpx.Client() as client:
        got = post_json(
            client,
            provider_server.base_url + "/embeddings",
            {"model": "m", "input": ["一"]},
            api_key="",
            timeout_s=10.0,
            retries=3,
            backoff_s=0.01,
            sleep=slept.append,
        )
    assert len(got["data"]) == 1
    assert slept[0] == pytest.approx(0.3)  # the server's Retry-After, not the backoff
    assert len(slept) == 2
    assert len(provider_server.requests) == 3


def test_failures_are_named_and_counted(provider_server: ProviderServer) -> None:
    calls: list[Call] = []
    with embedder(provider_server, calls) as api:
        provider_server.push(*[Fault.error(500, retry_after="0")] * 3)
        with pytest.raises(LLMUnavailable, match="HTTP 500"):
            api.embed(["一条"])
        assert len(provider_server.requests) == 3  # the first try and two retries
        provider_server.push(*[Fault.error(429, retry_after="0")] * 3)
        with pytest.raises(LLMRateLimited):
            api.embed(["一条"])
        provider_server.push(Fault.garbage())
        with pytest.raises(LLMBadResponse, match="not JSON"):
            api.embed(["一条"])
        provider_server.embed = lambda text: [float("nan")] * 32
        with pytest.raises(LLMBadResponse, match="non-finite"):
            api.embed(["一条"])
        assert [c.outcome for c in calls] == ["unavailable", "rate_limited", "bad_response"] * 1 + [
            "bad_response"
        ]


def test_a_question_gets_its_own_short_deadline(provider_server: ProviderServer) -> None:
    calls: list[Call] = []
    with embedder(provider_server, calls, query_timeout_s=0.2) as api:
        provider_server.push(Fault.slow(1.5))
        with pytest.raises(LLMTimeout):
            api.embed_query("小明学什么乐器")
        assert [c.outcome for c in calls] == ["timeout"]
        assert api.embed_query("小明学什么乐器").shape == (32,)  # the next one is on time
