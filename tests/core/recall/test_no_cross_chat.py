"""No memory of another chat ever comes back, with every candidate path on.

The relevance model here lets everything through (floor 0), so nothing but the
visibility rule stands between a question and another chat's memories: if any path
(words, dense, links, successors, the named day) leaked, this would see it.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import FakeClock, Settings, Yuji
from memory_core.recall.features import FEATURES
from memory_core.recall.relevance import RelevanceModel
from memory_core.vectors import FakeEmbedder, sync_index
from tests.core.vectors.helpers import T0, add_alias, add_evidence, add_memory

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
SCOPES = ("group:1", "group:2", "private:3")
WORDS = ["小明", "阿花", "吉他", "猫", "搬家", "下沙", "考试", "咖啡", "周六", "医院", "30块"]


def open_model(tmp: Path, sure: float = 0.0) -> Path:
    """A model that lets every candidate through (floor 0, P = .5 for all); with
    `sure` above .5 every one of them lands in `related`."""
    n = len(FEATURES)
    model = RelevanceModel("fake", FEATURES, np.zeros(n), np.ones(n), np.zeros(n), 0.0, 0.0, sure)
    path = tmp / "open.json"
    path.write_text(model.to_json(), encoding="utf-8")
    return path


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map("".join)
memories = st.lists(
    st.tuples(st.sampled_from(SCOPES), st.sampled_from(WORDS[:2]), texts), max_size=12
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    written=memories,
    question=texts,
    asked_in=st.sampled_from(SCOPES),
    linked=st.booleans(),
    dated=st.booleans(),
)
async def test_recall_returns_only_the_asked_chat(
    written: list[tuple[str, str, str]], question: str, asked_in: str, linked: bool, dated: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = Settings(data_dir=root / "data", relevance_weights=str(open_model(root)))
        core = await Yuji.open(config, clock=FakeClock(NOW), embedder=FakeEmbedder())
        try:
            ids = [await add_memory(core.db, s, subject, text) for s, subject, text in written]
            if dated:  # every memory told on the day the question names, in its own chat
                for mid, (scope, _, text) in zip(ids, written, strict=True):
                    await add_evidence(core.db, mid, scope, text)
                question = f"{T0.month}月{T0.day}号{question}"
            for scope in SCOPES:
                await add_alias(core.db, scope, "阿明", "小明")
            if linked and len(ids) > 1:  # a link across chats must not carry a memory over
                await core.memory_repo.add_relation(
                    written[0][0], ids[0], ids[-1], "related", reason="t", at=NOW
                )
            assert core.vectors is not None
            await sync_index(core.memory_repo, core.vectors.embedder, core.vector_place)
            for retrospective in ("", "以前"):
                result = await core.recall.recall(asked_in, retrospective + question, now=NOW)
                assert all(item.memory.scope == asked_in for item in result.items)
                found = await core.recall.search(asked_in, question, 50, NOW)
                assert all(memory.scope == asked_in for memory in found)
        finally:
            await core.close()
