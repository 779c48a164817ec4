"""core.recall end to end on a real database: stages, silence, time, graph, the vector
hook, reindex, and the `yuji recall` / `yuji reindex` commands."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import insert, text

from memory_core import FakeClock, Yuji
from memory_core.recall.chat_cache import ChatCache
from memory_core.recall.vector_port import VECTOR_LABEL, VectorAsk, VectorGuess
from memory_core.settings import VectorMode
from memory_core.storage.schema import aliases
from memory_core.types import EvidenceRef, NewExperience

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
    result = await core.recall.recall(G1, "小明学的吉他在哪上课")
    assert [r.memory.id for r in result.items] == [target]
    item = result.items[0]
    assert item.stage == "lexical"
    assert item.score > 0
    assert "吉他" in item.reason
    assert result.trace


async def test_silence_when_nothing_clears_the_bar(core: Yuji) -> None:
    await write(core, G1, "小明从九月开始学吉他")
    assert (await core.recall.recall(G1, "小明去过日本吗")).items == ()
    assert (await core.recall.recall(G1, "小明")).items == ()
    assert (await core.recall.recall(G1, "")).items == ()


async def test_near_wording_through_the_synonym_table(core: Yuji) -> None:
    target = await write(core, G1, "小明养了一只橘猫叫团子")
    result = await core.recall.recall(G1, "小明家的猫咪怎么样了")
    assert [(r.memory.id, r.stage) for r in result.items] == [(target, "near")]


async def test_answer_type_keeps_quiet_when_the_memory_lacks_it(core: Yuji) -> None:
    await write(core, G1, "骰子工坊的包间有投影")
    assert (await core.recall.recall(G1, "骰子工坊晚上几点关门")).items == ()
    priced = await write(core, G1, "骰子工坊包间每人30块")
    got = await core.recall.recall(G1, "骰子工坊包间多少钱")
    assert [r.memory.id for r in got.items] == [priced]


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
    result = await core.recall.recall(G1, "卡坦岛那局谁赢了")
    ids = [r.memory.id for r in result.items]
    assert ids[:2] in ([a, b], [b, a])
    assert c not in ids  # never two hops
    assert {r.stage for r in result.items if r.memory.id == b} <= {"lexical", "graph"}


async def test_at_most_the_limit(core: Yuji) -> None:
    for i in range(8):
        await write(core, G1, f"桌游局第{i}次在老周家开，玩卡坦岛", subject="老周")
    result = await core.recall.recall(G1, "老周家的卡坦岛桌游局", limit=3)
    assert 0 < len(result.items) <= 3


class FakeVector:
    def __init__(self, mode: VectorMode, memory_id: int) -> None:
        self.mode: VectorMode = mode
        self.memory_id = memory_id
        self.asked: list[AbstractSet[int]] = []

    async def guess(self, ask: VectorAsk) -> VectorGuess | None:
        self.asked.append(ask.candidate_ids)
        return VectorGuess(self.memory_id, 0.9, 0.1)


async def test_vector_guess_only_when_lexical_stages_found_nothing(core: Yuji) -> None:
    target = await write(core, G1, "小明在杭州阿里写代码")
    other = await write(core, G2, "别的群的记忆")
    fake = FakeVector("candidate", target)
    core.recall.vector = fake
    got = await core.recall.recall(G1, "小明那件事后来怎么样了")
    assert [(r.memory.id, r.stage, r.reason) for r in got.items] == [
        (target, "vector", VECTOR_LABEL)
    ]
    assert other not in fake.asked[-1]
    fake.mode = "shadow"
    assert (await core.recall.recall(G1, "小明那件事后来怎么样了")).items == ()
    fake.mode = "candidate"
    fake.memory_id = other  # a guess outside the visible set is dropped
    assert (await core.recall.recall(G1, "小明那件事后来怎么样了")).items == ()
    fake.memory_id = target
    asked = len(fake.asked)
    lexical = await core.recall.recall(G1, "小明在杭州阿里写代码吗")
    assert lexical.items[0].stage == "lexical"
    assert len(fake.asked) == asked


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
    monkeypatch.chdir(tmp_path)

    async def seed() -> None:
        core = await Yuji.open(Settings(data_dir=data))
        try:
            await write(core, G1, "小明从九月开始学吉他")
        finally:
            await core.close()

    asyncio.run(seed())
    assert main(["recall", "小明学吉他", "--scope", G1, "--json"]) == 0
    out = capsys.readouterr().out
    assert '"stage": "lexical"' in out
    assert main(["recall", "小明学吉他", "--scope", G2]) == 0
    assert "没有" in capsys.readouterr().out
    assert main(["reindex"]) == 0
    assert "reindexed 1" in capsys.readouterr().out


async def test_who_is_x_is_answered_by_what_the_chat_says_x_is(core: Yuji) -> None:
    await core.memories.add_alias(G1, "猫姐", "喵姐")
    rule = await write(core, G1, "群规：禁止发卖猫广告", subject="喵姐")
    role = await write(core, G1, "喵姐是群主，在城西做流浪猫救助", subject="喵姐")
    await write(core, G2, "喵姐是隔壁群的管理员", subject="喵姐")
    got = await core.recall.recall(G1, "猫姐是干啥的")
    assert [r.memory.id for r in got.items] == [role]
    assert "喵姐是" in got.items[0].reason
    assert rule not in [r.memory.id for r in got.items]
    # a question with content of its own goes through the words, not "who is"
    assert (await core.recall.recall(G1, "猫姐自己养了几只猫")).items == ()


async def test_a_question_about_a_changed_state_gets_the_current_version(
    core: Yuji, clock: FakeClock
) -> None:
    old = await write(core, G1, "大刘住在下沙，开车来打牌", type_="state")
    clock.advance(timedelta(days=30))
    new = await write(core, G1, "大刘七月搬到了余杭未来科技城", type_="state")
    assert (await core.memories.supersede(G1, old, new, reason="搬家", changed_by="model")).applied
    got = await core.recall.recall(G1, "大刘还住在下沙吗")
    assert [(r.memory.id, r.stage) for r in got.items] == [(new, "graph")]
    assert f"#{old}" in got.items[0].reason
    # the past version itself is only for questions about the past
    assert old not in [r.memory.id for r in got.items]
    assert (await core.recall.recall(G2, "大刘还住在下沙吗")).items == ()


async def test_where_does_x_live_now_follows_the_move(core: Yuji, clock: FakeClock) -> None:
    # "住" stands alone in the question; it matches the old "住在下沙", whose
    # replacement is what is true now
    old = await write(core, G1, "大刘住在下沙，开车来打牌", subject="大刘", type_="state")
    clock.advance(timedelta(days=30))
    new = await write(core, G1, "大刘七月搬到了余杭未来科技城", subject="大刘", type_="state")
    assert (await core.memories.supersede(G1, old, new, reason="搬家", changed_by="model")).applied
    got = await core.recall.recall(G1, "大刘现在住哪边")
    assert [r.memory.id for r in got.items] == [new]


async def test_a_write_is_seen_by_the_next_question_despite_the_chat_cache(core: Yuji) -> None:
    await write(core, G1, "小明在学吉他")
    assert (await core.recall.recall(G1, "阿杰养的仓鼠叫什么")).items == ()  # fills the cache
    hamster = await write(core, G1, "阿杰养的仓鼠叫豆包", subject="阿杰")
    got = await core.recall.recall(G1, "阿杰养的仓鼠叫什么")
    assert [r.memory.id for r in got.items] == [hamster]


async def test_a_write_by_another_process_shows_once_the_chat_cache_expires(core: Yuji) -> None:
    """Another process (the CLI) writes without telling this one: what recall cached
    about the chat is reused for its TTL, then read again."""
    long, none = ChatCache(ttl_s=3600), ChatCache(ttl_s=0)
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
