"""A day named is a day searched (recall/dated.py): a question that names a day finds
what was told that day, with no word in common, and only in its own chat."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from memory_core import FakeClock, Settings, Yuji
from memory_core.recall.features import FEATURES
from memory_core.vectors import FakeEmbedder
from tests.core.relevance_models import DENSE, WORDS, hand_model
from tests.core.test_memory_dated import memory
from tests.core.vectors.helpers import add_evidence, add_memory

G1, G2 = "group:1", "group:2"
NOW = datetime(2026, 11, 20, 13, 30, tzinfo=UTC)  # Friday 21:30 in Shanghai
SATURDAY = datetime(2026, 11, 14, 12, 0, tzinfo=UTC)  # last Saturday, 20:00 in Shanghai
LONG_AGO = datetime(2026, 1, 1, tzinfo=UTC)
DATED = "dated"


@pytest.fixture
async def dated_core(settings: Settings) -> AsyncIterator[Yuji]:
    """Hand-made models that read the dated feature (and words, cosine) only."""
    core = await Yuji.open(
        settings,
        clock=FakeClock(NOW),
        embedder=FakeEmbedder(),
        relevance=hand_model("fake", {**DENSE, DATED: 6.0}),
        lexical_relevance=hand_model(weights={**WORDS, DATED: 6.0}),
    )
    try:
        yield core
    finally:
        await core.close()


async def test_a_named_day_finds_what_was_told_that_day(dated_core: Yuji) -> None:
    told = await memory(dated_core, G1, "小明买了一把新吉他", LONG_AGO, said=SATURDAY)
    other = await memory(
        dated_core, G1, "阿花养了一只橘猫", LONG_AGO, said=SATURDAY - timedelta(days=3)
    )
    await memory(dated_core, G2, "老周换了新工作", LONG_AGO, said=SATURDAY)

    ex = await dated_core.recall.explain(G1, "上周六发生了什么？", now=NOW)
    column = ex.rows[:, FEATURES.index(DATED)]
    by_id = {mem.id: float(v) for mem, v in zip(ex.memories, column, strict=True)}
    assert by_id[told] == 1.0
    assert by_id.get(other, 0.0) == 0.0
    assert all(mem.scope == G1 for mem in ex.memories)
    assert any("names a day: 上周六" in line for line in ex.trace)

    result = await dated_core.recall.recall(G1, "上周六发生了什么？", now=NOW)
    assert result.items[0].memory.id == told
    assert result.items[0].band == "sure"
    assert all(item.memory.scope == G1 for item in result.items)

    english = await dated_core.recall.recall(G1, "what happened last Saturday?", now=NOW)
    assert english.items[0].memory.id == told


async def test_a_day_is_the_chats_local_day(dated_core: Yuji) -> None:
    # 00:30 on Saturday in Shanghai is still Friday in UTC: it is Saturday's.
    late = await memory(
        dated_core,
        G1,
        "小明凌晨还在练琴",
        LONG_AGO,
        said=datetime(2026, 11, 13, 16, 30, tzinfo=UTC),
    )
    ex = await dated_core.recall.explain(G1, "上周六发生了什么？", now=NOW)
    column = ex.rows[:, FEATURES.index(DATED)]
    assert {m.id: float(v) for m, v in zip(ex.memories, column, strict=True)}[late] == 1.0
    friday = await dated_core.recall.explain(G1, "上周五发生了什么？", now=NOW)
    dated = {
        m.id for m, r in zip(friday.memories, friday.rows, strict=True) if r[FEATURES.index(DATED)]
    }
    assert late not in dated


async def test_a_wake_naming_no_day_reads_no_date(dated_core: Yuji) -> None:
    mid = await add_memory(dated_core.db, G1, "小明", "小明买了一把新吉他")
    await add_evidence(dated_core.db, mid, G1, "我买了新吉他")
    ex = await dated_core.recall.explain(G1, "小明的吉他是什么牌子", now=NOW)
    assert len(ex.memories) == 1
    assert not ex.rows[:, FEATURES.index(DATED)].any()


async def test_another_chats_dated_memory_never_comes(dated_core: Yuji) -> None:
    await memory(dated_core, G2, "老周换了新工作", LONG_AGO, said=SATURDAY)
    await memory(dated_core, G1, "阿花养了一只橘猫", LONG_AGO, said=SATURDAY - timedelta(days=3))
    for question in ("上周六发生了什么？", "what happened last Saturday?"):
        ex = await dated_core.recall.explain(G1, question, now=NOW)
        assert all(mem.scope == G1 for mem in ex.memories)
        result = await dated_core.recall.recall(G1, question, now=NOW)
        assert all(item.memory.scope == G1 for item in result.items)
        assert not any(item.band == "sure" for item in result.items)
