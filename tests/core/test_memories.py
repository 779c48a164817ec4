"""core.memories: write (evidence, near-duplicate hint), edit, supersede gates,
contradicts, retract, status, aliases, credit, and refusal of other chats' ids."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from memory_core import FakeClock, Yuji
from memory_core.errors import EvidenceRequired, NotFound, ValidationError
from memory_core.memories import Memories
from memory_core.types import EvidenceRef, NewExperience

G1, G2 = "group:1", "group:2"
T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)


async def heard(core: Yuji, scope: str = G1, fp: str = "m1", text_: str = "说了一句话") -> int:
    return await core.archive.append(
        NewExperience(scope=scope, fingerprint=fp, sender_id="7", text=text_, sent_at=T0)
    )


async def ev(core: Yuji, scope: str = G1, fp: str = "m1") -> list[EvidenceRef]:
    return [EvidenceRef(experience_id=await heard(core, scope, fp))]


async def test_write_stores_memory_version_evidence_and_index(core: Yuji) -> None:
    refs = await ev(core)
    out = await core.memories.write(
        G1, type="fact", subject="小明", content="小明从九月开始学吉他", evidence=refs
    )
    memory = out.memory
    assert (memory.scope, memory.type, memory.subject, memory.version) == (G1, "fact", "小明", 1)
    assert memory.status == "active"
    assert memory.valid_from == core.clock.now()
    assert out.near_duplicate is None
    assert await core.memories.evidence(G1, memory.id) == refs
    history = await core.memories.history(G1, memory.id)
    assert [h.version for h in history] == [1]
    async with core.db.read() as conn:
        rows = (
            await conn.execute(
                text("SELECT rowid FROM memory_fts WHERE rowid = :i"), {"i": memory.id}
            )
        ).all()
    assert len(rows) == 1


async def test_write_without_evidence_is_refused(core: Yuji) -> None:
    with pytest.raises(EvidenceRequired):
        await core.memories.write(G1, type="fact", subject="x", content="y", evidence=[])
    assert await core.memories.newest(G1) == []


async def test_write_refuses_evidence_of_another_chat(core: Yuji) -> None:
    other = await ev(core, G2, "x1")
    with pytest.raises(NotFound):
        await core.memories.write(G1, type="fact", subject="x", content="y", evidence=other)
    assert await core.memories.newest(G1) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"type": "opinion"}, "type"),
        ({"content": "   "}, "empty"),
        ({"importance": 1.5}, "importance"),
        ({"confidence": -0.1}, "confidence"),
    ],
)
async def test_write_validates_fields(core: Yuji, kwargs: dict[str, object], message: str) -> None:
    refs = await ev(core)
    args: dict[str, object] = {"type": "fact", "subject": "x", "content": "内容", "evidence": refs}
    args.update(kwargs)
    with pytest.raises(ValidationError, match=message):
        await core.memories.write(G1, **args)  # type: ignore[arg-type]


async def test_near_duplicate_is_a_hint_and_never_merges(core: Yuji) -> None:
    refs = await ev(core)
    first = await core.memories.write(
        G1, type="fact", subject="小明", content="小明每周六下午去琴行上吉他课", evidence=refs
    )
    second = await core.memories.write(
        G1, type="fact", subject="小明", content="小明每周六下午去琴行上吉他课呢", evidence=refs
    )
    assert second.near_duplicate is not None
    assert second.near_duplicate.id == first.memory.id
    assert second.similarity >= 0.85
    assert second.memory.id != first.memory.id
    assert len(await core.memories.newest(G1)) == 2


async def test_numbers_are_never_near_duplicates(core: Yuji) -> None:
    refs = await ev(core)
    await core.memories.write(G1, type="fact", subject="群", content="撤离率 20%", evidence=refs)
    out = await core.memories.write(
        G1, type="fact", subject="群", content="撤离率 30%", evidence=refs
    )
    assert out.near_duplicate is None
    assert out.similarity == 0.0


async def test_near_duplicate_looks_only_at_same_chat_and_type(core: Yuji) -> None:
    await core.memories.write(
        G2, type="fact", subject="a", content="小明每周六去琴行", evidence=await ev(core, G2, "o")
    )
    refs = await ev(core)
    await core.memories.write(
        G1, type="event", subject="a", content="小明每周六去琴行", evidence=refs
    )
    out = await core.memories.write(
        G1, type="fact", subject="a", content="小明每周六去琴行", evidence=refs
    )
    assert out.near_duplicate is None


async def test_edit_keeps_old_text_in_versions(core: Yuji) -> None:
    refs = await ev(core)
    memory = (
        await core.memories.write(
            G1, type="fact", subject="小明", content="旧的说法", evidence=refs
        )
    ).memory
    edited = await core.memories.edit(
        G1, memory.id, content="新的说法", reason="更正", changed_by="model"
    )
    assert (edited.content, edited.version) == ("新的说法", 2)
    history = await core.memories.history(G1, memory.id)
    assert [(h.version, h.content) for h in history] == [(1, "旧的说法"), (2, "新的说法")]
    assert history[1].reason == "更正"


async def test_edit_of_another_chats_memory_is_not_found(core: Yuji) -> None:
    memory = (
        await core.memories.write(
            G2, type="fact", subject="x", content="别的群", evidence=await ev(core, G2, "o")
        )
    ).memory
    with pytest.raises(NotFound):
        await core.memories.edit(G1, memory.id, content="改", reason="r", changed_by="model")
    assert (await core.memories.get(G2, memory.id)).content == "别的群"


async def test_supersede_closes_old_when_all_gates_pass(core: Yuji, clock: FakeClock) -> None:
    refs = await ev(core)
    old = (
        await core.memories.write(G1, type="state", subject="a", content="住在北京", evidence=refs)
    ).memory
    clock.advance(timedelta(days=3))
    new = (
        await core.memories.write(G1, type="state", subject="a", content="搬到上海", evidence=refs)
    ).memory
    out = await core.memories.supersede(G1, old.id, new.id, reason="他说搬家了", changed_by="model")
    assert out.applied
    closed = await core.memories.get(G1, old.id)
    assert closed.valid_to == new.valid_from
    assert closed.status == "active"
    assert (await core.memories.get(G1, new.id)).valid_to is None


async def test_supersede_without_explicit_reason_degrades_to_contradicts(core: Yuji) -> None:
    refs = await ev(core)
    old = (
        await core.memories.write(G1, type="state", subject="a", content="住在北京", evidence=refs)
    ).memory
    new = (
        await core.memories.write(G1, type="state", subject="a", content="搬到上海", evidence=refs)
    ).memory
    out = await core.memories.supersede(G1, old.id, new.id, reason="", changed_by="model")
    assert not out.applied
    assert "contradicts" in out.detail
    assert (await core.memories.get(G1, old.id)).valid_to is None
    async with core.db.read() as conn:
        kinds = (await conn.execute(text("SELECT kind FROM memory_relations"))).scalars().all()
    assert kinds == ["contradicts"]


async def test_supersede_of_retracted_old_degrades(core: Yuji) -> None:
    refs = await ev(core)
    old = (
        await core.memories.write(G1, type="state", subject="a", content="甲", evidence=refs)
    ).memory
    new = (
        await core.memories.write(G1, type="state", subject="a", content="乙", evidence=refs)
    ).memory
    await core.memories.retract(G1, old.id, reason="错了", changed_by="admin")
    out = await core.memories.supersede(G1, old.id, new.id, reason="r", changed_by="model")
    assert not out.applied
    assert "retracted" in out.detail


async def test_supersede_across_chats_is_not_found_and_closes_nothing(core: Yuji) -> None:
    other = (
        await core.memories.write(
            G2, type="state", subject="a", content="甲", evidence=await ev(core, G2, "o")
        )
    ).memory
    mine = (
        await core.memories.write(
            G1, type="state", subject="a", content="乙", evidence=await ev(core)
        )
    ).memory
    with pytest.raises(NotFound):
        await core.memories.supersede(G1, other.id, mine.id, reason="r", changed_by="model")
    with pytest.raises(NotFound):
        await core.memories.supersede(G2, other.id, mine.id, reason="r", changed_by="model")
    assert (await core.memories.get(G2, other.id)).valid_to is None


async def test_contradict_keeps_both_open(core: Yuji) -> None:
    refs = await ev(core)
    a = (
        await core.memories.write(G1, type="fact", subject="a", content="喜欢猫", evidence=refs)
    ).memory
    b = (
        await core.memories.write(G1, type="fact", subject="a", content="讨厌猫", evidence=refs)
    ).memory
    await core.memories.contradict(G1, a.id, b.id, reason="两次说法不同", changed_by="model")
    await core.memories.contradict(G1, b.id, a.id, reason="again", changed_by="model")
    async with core.db.read() as conn:
        count = (await conn.execute(text("SELECT count(*) FROM memory_relations"))).scalar_one()
    assert count == 1
    for memory_id in (a.id, b.id):
        got = await core.memories.get(G1, memory_id)
        assert (got.status, got.valid_to) == ("active", None)
    with pytest.raises(ValidationError):
        await core.memories.contradict(G1, a.id, a.id, reason="r", changed_by="model")


async def test_retract_hides_but_keeps_history(core: Yuji) -> None:
    refs = await ev(core)
    memory = (
        await core.memories.write(G1, type="fact", subject="a", content="甲", evidence=refs)
    ).memory
    retracted = await core.memories.retract(G1, memory.id, reason="说错了", changed_by="admin")
    assert (retracted.status, retracted.version) == ("retracted", 2)
    assert await core.memories.newest(G1) == []
    assert [m.id for m in await core.memories.newest(G1, status="retracted")] == [memory.id]
    assert len(await core.memories.history(G1, memory.id)) == 2
    assert await core.memories.evidence(G1, memory.id) == refs


async def test_set_status_cold_and_back(core: Yuji) -> None:
    refs = await ev(core)
    memory = (
        await core.memories.write(G1, type="fact", subject="a", content="甲", evidence=refs)
    ).memory
    cold = await core.memories.set_status(G1, memory.id, "cold", reason="gc", changed_by="nightly")
    assert cold.status == "cold"
    back = await core.memories.set_status(
        G1, memory.id, "active", reason="用到了", changed_by="admin"
    )
    assert (back.status, back.version) == ("active", 3)


async def test_alias_resolves_subject_on_write(core: Yuji) -> None:
    await core.memories.add_alias(G1, "阿明", "小明")
    refs = await ev(core)
    memory = (
        await core.memories.write(G1, type="fact", subject="阿明", content="学吉他", evidence=refs)
    ).memory
    assert memory.subject == "小明"
    assert await core.memories.aliases(G1) == {"阿明": "小明"}
    assert await core.memories.aliases(G2) == {}
    with pytest.raises(ValidationError):
        await core.memories.add_alias(G1, "小明", "阿明")


async def test_credit_counts_uses_in_scope_only(core: Yuji, clock: FakeClock) -> None:
    refs = await ev(core)
    memory = (
        await core.memories.write(G1, type="fact", subject="a", content="甲", evidence=refs)
    ).memory
    at = clock.now() + timedelta(hours=1)
    await core.memories.credit(G1, [memory.id, memory.id], at)
    await core.memories.credit(G2, [memory.id], at)
    got = await core.memories.get(G1, memory.id)
    assert (got.hit_count, got.last_accessed_at) == (1, at)


async def test_search_finds_current_memories_of_this_chat(core: Yuji) -> None:
    refs = await ev(core)
    memory = (
        await core.memories.write(
            G1, type="fact", subject="小明", content="小明在学吉他", evidence=refs
        )
    ).memory
    await core.memories.write(
        G2, type="fact", subject="小明", content="小明在学吉他", evidence=await ev(core, G2, "o")
    )
    found = await core.memories.search(G1, "吉他")
    assert [m.id for m in found] == [memory.id]


async def test_search_finds_a_plan_dated_ahead_first_that_no_question_sees_yet(
    core: Yuji, clock: FakeClock
) -> None:
    """Consolidation's search tool: "四级不考了" must find next week's exam to retract it,
    though recall hides it until its day; it comes before the current memories."""
    refs = await ev(core)
    current = await core.memories.write(
        G1, type="fact", subject="阿哲", content="阿哲在准备四级", evidence=refs
    )
    exam = await core.memories.write(
        G1,
        type="event",
        subject="阿哲",
        content="阿哲3月9日考四级",
        evidence=refs,
        valid_from=clock.now() + timedelta(days=7),
    )
    found = await core.memories.search(G1, "阿哲3月9日考四级")
    assert [m.id for m in found] == [exam.memory.id, current.memory.id]
    asked = await core.recall.recall(G1, "阿哲考四级", now=clock.now())
    assert exam.memory.id not in [r.memory.id for r in asked.items]


async def test_every_write_recall_may_see_tells_recall_the_chat(
    core: Yuji, clock: FakeClock
) -> None:
    """Retract, restore, forget, supersede and the end of a validity each drop what
    recall cached about the chat (`on_change`, which the core wires to
    `Recall.invalidate`), as a write, an edit and an alias do."""
    told: list[str] = []
    memories = Memories(core.db, clock, core.settings, repo=core.memory_repo, on_change=told.append)
    refs = await ev(core)

    async def new(content: str) -> int:
        return (
            await memories.write(G1, type="state", subject="a", content=content, evidence=refs)
        ).memory.id

    first, second, third = await new("住在北京"), await new("爱喝茶"), await new("养了猫")
    clock.advance(timedelta(days=3))
    moved = await new("搬到上海")
    told.clear()
    steps: list[tuple[str, Callable[[], Awaitable[object]]]] = [
        ("retract", lambda: memories.retract(G1, second, reason="说错了", changed_by="admin")),
        (
            "restore",
            lambda: memories.set_status(G1, second, "active", reason="没错", changed_by="admin"),
        ),
        ("forget", lambda: memories.forget(G1, third, reason="本人要求")),
        (
            "supersede",
            lambda: memories.supersede(G1, first, moved, reason="他说搬家了", changed_by="model"),
        ),
        (
            "end of validity",
            lambda: memories.end_validity(
                G1, second, clock.now(), reason="不喝了", changed_by="admin"
            ),
        ),
    ]
    for name, step in steps:
        await step()
        assert told == [G1], name
        told.clear()
