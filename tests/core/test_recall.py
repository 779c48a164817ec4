"""core.recall end to end on a real database: stages, P and its reasons, silence, time,
graph, dense retrieval, reindex, and the `yuji recall` / `yuji reindex` commands.

The relevance models are the hand-made ones of relevance_models.py (conftest's `core`),
so these tests pin the pipeline's invariants, not the shipped weights."""

from __future__ import annotations

import json
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import insert, text

from memory_core import FakeClock, Yuji
from memory_core.recall import RELATED_LABEL
from memory_core.recall.chat_cache import ChatCache
from memory_core.recall.dense_port import DenseScores
from memory_core.recall.engine import Recall
from memory_core.settings import VectorMode
from memory_core.storage.schema import aliases
from memory_core.types import EvidenceRef, NewExperience
from memory_core.vectors import E5Embedder

from .relevance_models import LEXICAL_MODEL, hand_model

G1, G2 = "group:1", "group:2"


async def write(
    core: Yuji, scope: str, content: str, *, subject: str = "小明", type_: str = "fact"
) -> int:
    exp = await core.archive.append(
        NewExperience(
            scope=scope,
            fingerprint=f"{scope}-{content}",
            sender_id="1",
            text=content,
            sent_at=core.clock.now(),
        )
    )
    out = await core.memories.write(
        scope,
        type=type_,  # type: ignore[arg-type]
        subject=subject,
        content=content,
        evidence=[EvidenceRef(experience_id=exp)],
    )
    return out.memory.id


async def test_exact_words_come_back_with_stage_score_and_reason(core: Yuji) -> None:
    target = await write(core, G1, "小明从九月开始学吉他，每周六去琴行上课")
    await write(core, G1, "小红喜欢吃火锅", subject="小红")
    result = await core.recall.recall(G1, "小明每周六去琴行上吉他课吗")
    assert [r.memory.id for r in result.items] == [target]
    item = result.items[0]
    assert item.stage == "lexical"
    assert 0.5 <= item.score <= 1  # P, at or above the hand model's threshold
    assert f"相关度 {item.score:.2f}" in item.reason
    assert item.band == "sure"
    assert item.why
    assert item.why[0][0] == "cover"
    assert result.trace


async def test_nothing_sure_when_nothing_clears_the_bar(core: Yuji) -> None:
    """Below the floor a memory is dropped unless the plain hybrid ranks it in its top
    five (recall never does worse than the hybrid): it comes back only as `related`."""
    await write(core, G1, "小明从九月开始学吉他")
    for wake in ("小明去过日本吗", "小明"):
        items = (await core.recall.recall(G1, wake)).items
        assert all(item.band == "related" for item in items)
        assert all(item.reason.startswith(RELATED_LABEL) for item in items)
    assert (await core.recall.recall(G1, "")).items == ()
    assert (await core.recall.recall(G1, "小红去过日本吗")).items == ()


async def test_other_chats_and_retracted_memories_never_come_back(core: Yuji) -> None:
    await write(core, G2, "小明从九月开始学吉他")
    gone = await write(core, G1, "小明从九月开始学吉他")
    await core.memories.retract(G1, gone, reason="说错了", changed_by="admin")
    assert (await core.recall.recall(G1, "小明学吉他")).items == ()


async def test_superseded_memory_is_past_but_retrospective_finds_it(
    core: Yuji, clock: FakeClock
) -> None:
    old = await write(core, G1, "小明住在城东的老房子", type_="state")
    clock.advance(timedelta(days=30))
    new = await write(core, G1, "小明搬到城西的新小区", type_="state")
    out = await core.memories.supersede(G1, old, new, reason="搬家了", changed_by="model")
    assert out.applied
    now = await core.recall.recall(G1, "小明住在哪个小区")
    assert [r.memory.id for r in now.items] == [new]
    before = await core.recall.recall(G1, "小明以前住的老房子在城东吗")
    assert before.retrospective
    assert before.items[0].memory.id == old
    assert "以前" in before.items[0].reason
    # As of a time before the change, the old one was simply true.
    then = await core.recall.recall(
        G1, "小明住的老房子在城东吗", now=clock.now() - timedelta(days=10)
    )
    assert [r.memory.id for r in then.items] == [old]


async def test_graph_adds_one_hop_neighbours_and_contradictions_stay_together(core: Yuji) -> None:
    a = await write(core, G1, "小明说那局卡坦岛是他赢的")
    b = await write(core, G1, "阿杰说那局其实是大刘赢的", subject="阿杰")
    c = await write(core, G1, "大刘最近在戒烟", subject="大刘")
    await core.memories.contradict(G1, a, b, reason="说法不同", changed_by="model")
    await core.memories.relate(G1, b, c, reason="同一个人", changed_by="model")
    result = await core.recall.recall(G1, "那局卡坦岛是谁赢的")
    ids = [r.memory.id for r in result.items]
    assert ids[:2] in ([a, b], [b, a])
    assert c not in ids  # never two hops
    assert {r.stage for r in result.items if r.memory.id == b} <= {"lexical", "graph"}


async def test_at_most_the_limit(core: Yuji) -> None:
    for i in range(8):
        await write(core, G1, f"老周家的卡坦岛桌游局第{i}次开", subject="老周")
    result = await core.recall.recall(G1, "老周家的卡坦岛桌游局", limit=3)
    assert len(result.items) == 3
    assert (await core.recall.recall(G1, "老周家的卡坦岛桌游局", limit=0)).items == ()


class FakeDense:
    """A DenseSearch with cosines fixed by hand; it answers for every id it knows, so
    recall's own visibility check is what keeps other chats out."""

    def __init__(self, mode: VectorMode, cosines: dict[int, float]) -> None:
        self.mode: VectorMode = mode
        self.embedder_id = "fake"
        self.fixed = cosines
        self.asked: list[AbstractSet[int]] = []

    def prefetch(self, text: str) -> None:
        pass  # the cosines are fixed: nothing to compute ahead

    async def scores(self, scope: str, text: str, candidate_ids: AbstractSet[int]) -> DenseScores:
        self.asked.append(candidate_ids)
        ids = sorted(self.fixed)
        return DenseScores(
            np.array(ids, dtype=np.int64),
            np.array([self.fixed[i] for i in ids], dtype=np.float32),
        )

    async def cosines(self, scope: str, text: str, ids: Sequence[int]) -> dict[int, float]:
        return {i: self.fixed[i] for i in ids if i in self.fixed}


def dense_recall(core: Yuji, fake: FakeDense) -> Recall:
    """P = sigmoid(8 * cosine - 6): a cosine of 0.9 passes the threshold (0.5) but
    stays under `sure` (0.9), so it is injected as a guess."""
    model = hand_model("fake", {"dense": 8.0}, bias=-6.0, floor=0.5, sure=0.9)
    return Recall(
        core.db,
        core.clock,
        core.live,
        repo=core.memory_repo,
        dense=fake,
        model=model,
        lexical_model=LEXICAL_MODEL,
    )


async def test_dense_finds_what_shares_no_words_labelled_as_a_guess_in_its_chat_only(
    core: Yuji,
) -> None:
    target = await write(core, G1, "小明在杭州阿里写代码")
    other = await write(core, G2, "别的群的记忆")
    gone = await write(core, G1, "小明以前在上海")
    await core.memories.retract(G1, gone, reason="说错了", changed_by="admin")
    fake = FakeDense("on", {target: 0.9, other: 0.99, gone: 0.99})
    recall = dense_recall(core, fake)
    got = await recall.recall(G1, "那位同学做什么工作")
    assert [(r.memory.id, r.stage, r.band) for r in got.items] == [(target, "vector", "related")]
    assert got.items[0].reason.startswith(RELATED_LABEL)
    assert got.items[0].why[0][0] == "dense"
    assert target in fake.asked[-1]
    assert other not in fake.asked[-1]
    assert gone not in fake.asked[-1]
    # Shadow: dense is computed (and traced) but the words alone decide: nothing here.
    fake.mode = "shadow"
    asked = len(fake.asked)
    shadow = await recall.recall(G1, "那位同学做什么工作")
    assert shadow.items == ()
    assert len(fake.asked) == asked + 1
    assert any(f"would inject: [{target}]" in line for line in shadow.trace)
    # Off: never consulted.
    fake.mode = "off"
    assert (await recall.recall(G1, "那位同学做什么工作")).items == ()
    assert len(fake.asked) == asked + 1


async def test_reindex_rebuilds_the_same_results(core: Yuji) -> None:
    await write(core, G1, "小明从九月开始学吉他")
    await write(core, G1, "小红喜欢吃火锅", subject="小红")
    before = await core.recall.recall(G1, "小明学吉他")
    async with core.db.write() as conn:
        await conn.execute(text("DELETE FROM memory_fts"))
    assert (await core.recall.recall(G1, "小明学吉他")).items == ()
    assert await core.recall.reindex() == 2
    after = await core.recall.recall(G1, "小明学吉他")
    assert [(r.memory.id, r.score) for r in after.items] == [
        (r.memory.id, r.score) for r in before.items
    ]


async def test_search_tool_sees_current_memories_without_the_bar(core: Yuji) -> None:
    target = await write(core, G1, "小明从九月开始学吉他")
    await write(core, G2, "小明从九月开始学吉他")
    found = await core.memories.search(G1, "吉他")
    assert [m.id for m in found] == [target]


def test_cli_recall_and_reindex(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio

    from memory_core import Settings
    from memory_core.cli import main

    data = tmp_path / "data"
    monkeypatch.setenv("YUJI_DATA_DIR", str(data))
    # The CLI reads its weights from YUJI_RELEVANCE_WEIGHTS (here: the hand model,
    # labelled for the bundled embedder; no index is built, so dense adds nothing).
    weights = tmp_path / "weights.json"
    weights.write_text(hand_model(E5Embedder().model_id).to_json(), encoding="utf-8")
    monkeypatch.setenv("YUJI_RELEVANCE_WEIGHTS", str(weights))
    monkeypatch.chdir(tmp_path)

    async def seed() -> None:
        core = await Yuji.open(Settings(data_dir=data), lexical_relevance=LEXICAL_MODEL)
        try:
            await write(core, G1, "小明从九月开始学吉他")
            await write(core, G2, "小红喜欢吃火锅", subject="小红")
        finally:
            await core.close()

    asyncio.run(seed())
    assert main(["recall", "小明从九月开始学吉他吗", "--scope", G1, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    [item] = got["items"]
    assert item["stage"] == "lexical"
    assert item["band"] == "sure"
    # No index is built, so the words-only weights decide: what moved P is the words.
    assert item["why"][0][0] in ("cover", "unsaid", "q_terms")
    assert main(["recall", "小明从九月开始学吉他吗", "--scope", G1]) == 0
    shown = capsys.readouterr().out
    assert f"P={item['score']:.2f}" in shown
    assert "因为：" in shown
    assert any(words in shown for words in ("问到的词它都说到了", "问到的词漏了几个"))
    assert main(["recall", "小明学吉他", "--scope", G2]) == 0
    assert "小明从九月开始学吉他" not in capsys.readouterr().out  # never another chat's
    assert main(["reindex"]) == 0
    assert "已为 2 条记忆重建全文索引" in capsys.readouterr().out


async def test_a_question_about_a_changed_state_gets_the_current_version(
    core: Yuji, clock: FakeClock
) -> None:
    old = await write(core, G1, "大刘住在下沙，开车来打牌", type_="state")
    clock.advance(timedelta(days=30))
    new = await write(core, G1, "大刘七月搬到了余杭未来科技城", type_="state")
    assert (await core.memories.supersede(G1, old, new, reason="搬家", changed_by="model")).applied
    # The words reach only the replaced version; the supersede chain brings what holds now.
    got = await core.recall.recall(G1, "还住在下沙吗")
    assert [(r.memory.id, r.stage) for r in got.items] == [(new, "graph")]
    assert got.items[0].why[0][0] == "via_successor"
    # the past version itself is only for questions about the past
    assert old not in [r.memory.id for r in got.items]
    assert (await core.recall.recall(G2, "还住在下沙吗")).items == ()


async def test_a_write_is_seen_by_the_next_question_despite_the_chat_cache(core: Yuji) -> None:
    await write(core, G1, "小明在学吉他")
    assert (await core.recall.recall(G1, "阿杰养的仓鼠叫什么")).items == ()  # fills the cache
    hamster = await write(core, G1, "阿杰养的仓鼠叫豆包", subject="阿杰")
    got = await core.recall.recall(G1, "阿杰养的仓鼠叫什么")
    assert [r.memory.id for r in got.items] == [hamster]


async def test_a_write_by_another_process_shows_once_the_chat_cache_expires(core: Yuji) -> None:
    """Another process (the CLI) writes without telling this one: what recall cached
    about the chat is reused for its TTL, then read again."""
    repo = core.memory_repo
    long, none = ChatCache(repo, ttl_s=3600), ChatCache(repo, ttl_s=0)
    await write(core, G1, "小明在学吉他")
    async with core.db.read() as conn:
        before = await long.names(conn, G1)
        await none.names(conn, G1)
        ids = await long.visible_ids(conn, G1, core.clock.now(), False)
        # The same object while fresh: the vector index keys its selection on it.
        assert await long.visible_ids(conn, G1, core.clock.now(), False) is ids
    async with core.db.write() as conn:  # straight into the table: nobody invalidates
        await conn.execute(
            insert(aliases).values(
                scope=G1, alias="明仔", canonical="小明", created_at=core.clock.now()
            )
        )
    async with core.db.read() as conn:
        assert await long.names(conn, G1) == before
        assert (await none.names(conn, G1))[2] == {"明仔": "小明"}


async def test_a_supersede_is_followed_at_once_despite_the_chat_cache(
    core: Yuji, clock: FakeClock
) -> None:
    """The cache remembers whether the chat has replaced versions at all; a supersede
    must drop that, or the next question would not follow the chain to the new state."""
    old = await write(core, G1, "大刘住在下沙，开车来打牌", type_="state")
    clock.advance(timedelta(days=30))
    new = await write(core, G1, "大刘七月搬到了余杭未来科技城", type_="state")
    question = "还住在下沙吗"
    assert [r.memory.id for r in (await core.recall.recall(G1, question)).items] == [old]
    assert (await core.memories.supersede(G1, old, new, reason="搬家", changed_by="model")).applied
    got = await core.recall.recall(G1, question)
    assert [(r.memory.id, r.stage) for r in got.items] == [(new, "graph")]
