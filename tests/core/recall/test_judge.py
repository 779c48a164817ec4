"""The optional recall judge (`YUJI_RECALL_JUDGE=llm`): it only moves memories between
the bands, never adds or drops one, never sees another chat, and leaves the bands as
recall set them when the model is slow, down or answers garbage."""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import FakeClock, Settings, Yuji
from memory_core.errors import LLMUnavailable
from memory_core.llm import LLMRequest, ScriptedLLM, text_response
from memory_core.llm.base import ChatResponse
from memory_core.recall.dense_port import RELATED_LABEL
from memory_core.recall.judge import Judge, rebanded
from memory_core.types import Band, Recalled
from memory_core.vectors import FakeEmbedder, sync_index
from tests.core.chat.test_texts import memory
from tests.core.recall.test_no_cross_chat import open_model
from tests.core.vectors.helpers import add_memory
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

__all__ = ["openai_server"]

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def item(memory_id: int, band: Band) -> Recalled:
    reason = "相关度 0.70"
    if band == "related":
        reason = f"{RELATED_LABEL}（相关度 0.20）"
    return Recalled(memory(memory_id, f"小明的第{memory_id}条记忆"), "vector", 0.5, reason, band)


bands = st.sampled_from(["sure", "related"])
chosen = st.lists(st.tuples(st.integers(1, 40), bands), max_size=5, unique_by=lambda t: t[0])


@given(chosen=chosen, named=st.frozensets(st.integers(-5, 80)))
def test_rebanding_moves_bands_only(chosen: list[tuple[int, Band]], named: frozenset[int]) -> None:
    items = [item(i, b) for i, b in chosen]
    out = rebanded(items, named)
    # the same memories, in the same order: nothing added, nothing dropped
    assert [o.memory for o in out] == [i.memory for i in items]
    for o in out:
        assert o.band == ("sure" if o.memory.id in named else "related")
        # a related memory always carries the label that it is no fact
        assert o.reason.startswith(RELATED_LABEL) == (o.band == "related")


def answer(ids: list[int]) -> ChatResponse:
    return text_response(json.dumps({"answers": ids}))


async def test_the_judge_moves_bands_by_its_answer() -> None:
    llm = ScriptedLLM([answer([2, 99])])  # 99 is no candidate: ignored, never added
    items = (item(1, "sure"), item(2, "related"))
    out = await Judge(llm, 1.0).bands("group:1", "小明在哪上班", items)
    assert [(o.memory.id, o.band) for o in out] == [(1, "related"), (2, "sure")]
    (request,) = llm.requests
    assert request.scope == "group:1"
    prompt = request.messages[-1].content or ""
    assert set(re.findall(r"#(\d+)", prompt)) == {"1", "2"}


@pytest.mark.parametrize(
    "reply",
    [
        text_response("我觉得第二条比较像"),
        text_response('{"answers": "two"}'),
        LLMUnavailable("down"),
    ],
    ids=["prose", "wrong-json", "down"],
)
async def test_garbage_or_an_error_keeps_the_bands(reply: ChatResponse | Exception) -> None:
    items = (item(1, "sure"), item(2, "related"))
    out = await Judge(ScriptedLLM([reply]), 1.0).bands("group:1", "小明在哪上班", items)
    assert out == items


async def test_a_slow_judge_is_cut_off_at_its_deadline_and_the_bands_stand() -> None:
    async def slow(request: LLMRequest) -> ChatResponse:
        await asyncio.sleep(30)
        return answer([2])

    items = (item(1, "sure"), item(2, "related"))
    out = await asyncio.wait_for(
        Judge(ScriptedLLM([slow]), 0.05).bands("group:1", "小明在哪上班", items), 5.0
    )
    assert out == items


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(named=st.lists(st.integers(1, 12), max_size=6))
async def test_through_the_wire_the_judge_never_adds_a_memory_or_reaches_another_chat(
    named: list[int],
) -> None:
    """The real path: recall on a core whose consolidation model is the loopback fake
    (the judge's model), answered with any ids, those of the other chat included."""
    with FakeOpenAIServer() as server, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = Settings(
            data_dir=root / "data",
            relevance_weights=str(open_model(root, sure=0.9)),
            llm_base_url=server.base_url,
            llm_model="fake-model",
            llm_max_retries=0,
            recall_judge="llm",
        )
        core = await Yuji.open(config, clock=FakeClock(NOW), embedder=FakeEmbedder())
        try:
            mine = [await add_memory(core.db, "group:1", "小明", f"小明养猫{i}") for i in range(3)]
            theirs = [
                await add_memory(core.db, "group:2", "小明", f"小明养猫{i}") for i in range(3)
            ]
            assert core.vectors is not None
            await sync_index(core.memory_repo, core.vectors.embedder, core.vector_place)
            server.push(Reply(content=json.dumps({"answers": named})))
            before = await core.recall.explain("group:1", "小明养猫吗", now=NOW)
            result = await core.recall.recall("group:1", "小明养猫吗", now=NOW)
            rows = await core.usage.repo.rows()
        finally:
            await core.close()
        ids = [i.memory.id for i in result.items]
        assert set(ids) <= {m.id for m in before.memories} <= set(mine)
        assert all(i.memory.scope == "group:1" for i in result.items)
        for i in result.items:
            assert i.band == ("sure" if i.memory.id in named else "related")
        (request,) = server.requests
        asked = {int(m) for m in re.findall(r"#(\d+)", request.prompt_text)}
        assert asked == set(ids)  # the judge saw exactly what recall chose here
        assert not asked & set(theirs)
        assert [r.job for r in rows] == ["judge"]
