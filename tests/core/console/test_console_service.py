"""core.console on a real SQLite file: the demo world, audited actions seen by the real
recall, another chat's ids, card diffs, reply blocks and live tunables."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_core import FakeClock, Settings, Yuji
from memory_core.cli.demo_world import DemoReport, load_demo
from memory_core.console import Actor, MemoryFilter
from memory_core.errors import NotFound, ValidationError
from memory_core.types import EvidenceRef, NewExperience

GROUP = "group:900001"
PRIVATE = "private:20002"
ADMIN = Actor("192.0.2.7", "session")


@pytest.fixture
async def world(core: Yuji) -> DemoReport:
    return await load_demo(core)


async def recalled_ids(core: Yuji, question: str) -> list[int]:
    return [r.memory.id for r in (await core.console.search(GROUP, question)).items]


async def test_the_demo_world_is_labelled_and_refuses_a_used_database(
    core: Yuji, world: DemoReport
) -> None:
    assert "样例" in world.label
    assert world.scopes == (GROUP, PRIVATE)
    assert (world.messages, world.memories) == (16, 9)
    with pytest.raises(ValidationError):
        await load_demo(core)


async def test_retract_hides_from_recall_and_restore_brings_back(
    core: Yuji, world: DemoReport
) -> None:
    coriander = world.memory_ids[GROUP][3]
    assert coriander in await recalled_ids(core, "阿珍不吃香菜吗")
    done = await core.console.act(GROUP, coriander, "retract", ADMIN, reason="测试")
    assert done.status == "retracted"
    assert coriander not in await recalled_ids(core, "阿珍不吃香菜吗")
    await core.console.act(GROUP, coriander, "restore", ADMIN)
    assert coriander in await recalled_ids(core, "阿珍不吃香菜吗")
    audit = await core.console.audit()
    assert [(a.action, a.target, a.address) for a in reversed(audit)] == [
        ("retract", f"{GROUP}#{coriander}", "192.0.2.7"),
        ("restore", f"{GROUP}#{coriander}", "192.0.2.7"),
    ]
    reasons = [v.reason for v in (await core.console.memory(GROUP, coriander)).versions]
    assert reasons[1] == f"控制台审计 #{audit[-1].id}: 测试"


async def test_edit_is_a_new_version_naming_its_audit_row(core: Yuji, world: DemoReport) -> None:
    memory_id = world.memory_ids[GROUP][2]
    await core.console.act(
        GROUP, memory_id, "edit", ADMIN, content="大刘住在滨江区", reason="更准确"
    )
    detail = await core.console.memory(GROUP, memory_id)
    assert detail.memory.content == "大刘住在滨江区"
    assert [v.content for v in detail.versions] == [
        "大刘住在滨江（从下沙搬过去）",
        "大刘住在滨江区",
    ]
    audit_id = (await core.console.audit())[0].id
    assert detail.versions[-1].reason == f"控制台审计 #{audit_id}: 更准确"
    assert str(detail.versions[-1].changed_by).startswith("console:")


async def test_pin_and_star_are_flags_not_versions(core: Yuji, world: DemoReport) -> None:
    memory_id = world.memory_ids[GROUP][0]
    await core.console.act(GROUP, memory_id, "pin", ADMIN)
    await core.console.act(GROUP, memory_id, "star", ADMIN)
    memory = await core.memories.get(GROUP, memory_id)
    assert (memory.pinned, memory.starred, memory.version) == (True, True, 1)
    await core.console.act(GROUP, memory_id, "unpin", ADMIN)
    assert not (await core.memories.get(GROUP, memory_id)).pinned


async def test_another_chats_id_is_not_found_and_nothing_is_audited(
    core: Yuji, world: DemoReport
) -> None:
    private_id = world.memory_ids[PRIVATE][0]
    with pytest.raises(NotFound):
        await core.console.memory(GROUP, private_id)
    with pytest.raises(NotFound):
        await core.console.act(GROUP, private_id, "retract", ADMIN)
    with pytest.raises(ValidationError):
        await core.console.act(GROUP, world.memory_ids[GROUP][0], "delete", ADMIN)
    assert await core.console.audit() == []
    assert await core.console.scope_of(private_id) == PRIVATE


async def test_the_evidence_chain_reaches_the_original_messages_and_images(
    core: Yuji, world: DemoReport
) -> None:
    detail = await core.console.memory(GROUP, world.memory_ids[GROUP][0])
    messages = [e.message for e in detail.evidence if e.message is not None]
    assert [m.experience.sender_name for m in messages] == ["小林", "小林"]
    assert "绝育" in messages[0].experience.text
    images = [a.attachment for m in messages for a in m.images]
    assert [a.mime for a in images] == ["image/png"]
    assert await core.archive.stored_file(images[0].sha256 or "") is not None
    kinds = {(r.relation.kind, r.outgoing) for r in detail.relations}
    assert kinds == {("supports", False), ("related", False)}


async def test_filters_page_and_subjects(core: Yuji, world: DemoReport) -> None:
    page = await core.console.memory_page(GROUP, MemoryFilter(types=("preference",)))
    assert {m.subject for m in page.items} == {"阿珍", "大刘"}
    assert page.total == 2
    by_subject = await core.console.memory_page(GROUP, MemoryFilter(subject="煤球"))
    assert by_subject.total == 2
    assert "小林" in page.subjects
    one = await core.console.memory_page(GROUP, MemoryFilter(limit=3, offset=6))
    assert (len(one.items), one.total) == (2, 8)


async def test_cards_have_history_with_diffs_and_turns_have_blocks(
    core: Yuji, world: DemoReport
) -> None:
    cards = {c.kind: c for c in await core.console.cards(GROUP)}
    assert len(cards) == 7
    status = cards["recent_status"]
    assert len(status.versions) == 2
    assert ("-", "- 大刘在下沙") in status.diffs[0]
    assert ("+", "- 大刘搬到了滨江") in status.diffs[0]
    turns = await core.console.turns(GROUP)
    assert len(turns) == 1
    assert [b.name for b in turns[0].injection.blocks][:2] == ["人设", "记忆卡片"]
    assert all(b.tokens > 0 for b in turns[0].injection.blocks)
    assert [i.cited for i in turns[0].injection.items] == [True]
    diaries = await core.console.diaries(GROUP)
    assert [len(d.content) > 0 for d in diaries] == [True, True]
    assert diaries[0].day > diaries[1].day  # newest first


async def test_overview_counts_chats_and_days(
    core: Yuji, world: DemoReport, clock: FakeClock
) -> None:
    core.alerts.fire("backup", "备份失败")
    view = await core.console.overview(online=True)
    assert [(c.scope, c.messages, c.memories) for c in view.chats] == [
        (GROUP, 15, 8),
        (PRIVATE, 1, 1),
    ]
    assert sum(view.chart.messages) == 16
    assert sum(view.chart.memories) == 9
    assert view.chart.memories[-1] == 9  # all written "today"
    assert [a.key for a in view.alerts] == ["backup"]
    clock.advance(timedelta(days=8))
    assert (await core.console.overview()).alerts == ()


async def test_tunables_take_effect_live_and_can_be_reset(core: Yuji, world: DemoReport) -> None:
    await core.console.set_tunable("recall_limit", "1", ADMIN)
    assert core.settings.recall_limit == 1
    assert core.chat.settings.recall_limit == 1
    assert len(await recalled_ids(core, "煤球绝育")) <= 1
    await core.console.set_tunable("nightly_time", "05:30", ADMIN)
    assert (core.nightly.cutoff.hour, core.nightly.cutoff.minute) == (5, 30)
    await core.console.set_tunable("nicknames", "小鱼, 大肥鱼", ADMIN)
    assert core.chat.settings.nicknames == ("小鱼", "大肥鱼")
    views = {v.name: v for v in await core.console.settings_views()}
    assert (views["recall_limit"].value, views["recall_limit"].origin) == ("1", "console")
    assert views["llm_api_key"].tunable is False
    with pytest.raises(ValidationError):
        await core.console.set_tunable("recall_limit", "0", ADMIN)
    with pytest.raises(ValidationError):
        await core.console.set_tunable("llm_api_key", "x", ADMIN)
    await core.console.reset_tunable("recall_limit", ADMIN)
    assert core.settings.recall_limit == 5
    assert core.consolidation.settings.recall_limit == 5


async def test_the_diversity_weight_changes_what_recall_picks_live(core: Yuji) -> None:
    """Two memories say nearly the same (a price added) and a third says something else:
    with no diversity weight the near twin takes the second slot, with the full weight
    the different one does, on the same engine object (no restart)."""
    scope = "group:7"
    ids: list[int] = []
    for text in (
        "小明每周六上午去琴行上吉他课",
        "小明每周六上午去琴行上吉他课，一节课200元",
        "周六的吉他课小明是去少年宫上",
    ):
        exp = await core.archive.append(
            NewExperience(
                scope=scope, fingerprint=text, sender_id="1", text=text, sent_at=core.clock.now()
            )
        )
        written = await core.memories.write(
            scope, type="fact", subject="小明", content=text, evidence=[EvidenceRef(exp)]
        )
        ids.append(written.memory.id)
    first, twin, other = ids

    async def picked() -> list[int]:
        found = await core.recall.recall(scope, "小明周六去哪里上吉他课", limit=2)
        return [r.memory.id for r in found.items]

    # At the default 0.3 the near twin's likeness already costs it the slot (the hand
    # model's P of the twin and the other are close); 0 gives it back.
    assert await picked() == [first, other]
    await core.console.set_tunable("recall_diversity", "1", ADMIN)
    assert await picked() == [first, other]
    await core.console.set_tunable("recall_diversity", "0", ADMIN)
    assert await picked() == [first, twin]
    with pytest.raises(ValidationError):
        await core.console.set_tunable("recall_diversity", "1.5", ADMIN)
    views = {v.name: v for v in await core.console.settings_views()}
    assert (views["recall_diversity"].value, views["recall_diversity"].origin) == (
        "0.0",
        "console",
    )


async def test_the_recall_floors_move_live_and_empty_means_calibrated(core: Yuji) -> None:
    """The console overrides the relevance model's calibrated points on the running
    engine: a floor of 1 never drops a memory above the sure line, a floor and sure
    line of 1 leave only the hybrid's top as guesses, a `sure` of 1 makes every memory
    related, and an empty
    value goes back to the calibrated point."""
    scope = "group:8"
    text = "小明每周六上午去琴行上吉他课"
    exp = await core.archive.append(
        NewExperience(
            scope=scope, fingerprint=text, sender_id="1", text=text, sent_at=core.clock.now()
        )
    )
    await core.memories.write(
        scope, type="fact", subject="小明", content=text, evidence=[EvidenceRef(exp)]
    )

    async def answer() -> list[tuple[str, bool]]:
        found = await core.recall.recall(scope, "小明周六去哪里上吉他课")
        return [(r.memory.content, r.band == "related") for r in found.items]

    calibrated = await answer()
    assert [content for content, _ in calibrated] == [text]
    await core.console.set_tunable("recall_floor", "1", ADMIN)
    assert await answer() == [(text, False)]  # sure under the hand model: kept
    await core.console.set_tunable("recall_sure", "1", ADMIN)
    # Nothing clears the floor now; the hybrid's own top is never dropped (recall never
    # does worse than the plain hybrid), so it stays, as a guess.
    assert await answer() == [(text, True)]
    await core.console.set_tunable("recall_sure", "", ADMIN)
    await core.console.set_tunable("recall_floor", "", ADMIN)
    assert await answer() == calibrated
    await core.console.set_tunable("recall_sure", "1", ADMIN)
    assert await answer() == [(text, True)]
    await core.console.set_tunable("recall_sure", "0", ADMIN)
    assert await answer() == [(text, False)]
    with pytest.raises(ValidationError):
        await core.console.set_tunable("recall_floor", "1.5", ADMIN)
    views = {v.name: v for v in await core.console.settings_views()}
    assert (views["recall_floor"].value, views["recall_floor"].origin) == (
        "",
        "default",
    )
    assert views["recall_sure"].origin == "console"


async def test_the_settings_page_says_where_each_value_came_from(
    settings: Settings, clock: FakeClock
) -> None:
    """The plugin hands `Yuji.open` where each setting came from; a console override
    wins over it."""
    core = await Yuji.open(
        settings, clock=clock, origins={"recall_limit": "environment", "timezone": ".env"}
    )
    try:
        await core.console.set_tunable("nightly_time", "05:00", ADMIN)
        views = {v.name: v.origin for v in await core.console.settings_views()}
        assert (views["recall_limit"], views["timezone"]) == ("environment", ".env")
        assert (views["nightly_time"], views["llm_model"]) == ("console", "default")
    finally:
        await core.close()


async def test_overrides_and_alerts_survive_a_restart(
    core: Yuji, world: DemoReport, clock: FakeClock
) -> None:
    await core.console.set_tunable("eligible_min_pending", "30", ADMIN)
    core.alerts.fire("backup", "备份失败")
    settings = core.live.configured
    await core.close()
    again = await Yuji.open(settings, clock=clock)
    try:
        assert again.settings.eligible_min_pending == 30
        assert again.consolidation.settings.eligible_min_pending == 30
        alerts = (await again.console.overview()).alerts
        assert [(a.key, a.text) for a in alerts] == [("backup", "备份失败")]
    finally:
        await again.close()


async def test_an_archive_search_reads_a_window_at_a_time_and_goes_on_from_there(
    core: Yuji, world: DemoReport
) -> None:
    repo = core.console.repo
    everything, rest = await repo.search_messages(GROUP, "香菜", before=None, window=999, limit=99)
    assert len(everything) >= 3
    assert rest is None
    assert [e.id for e in everything] == sorted((e.id for e in everything), reverse=True)
    # a window of 4 messages at a time finds the same messages, newest first
    found: list[int] = []
    before: int | None = None
    for _ in range(20):
        part, before = await repo.search_messages(GROUP, "香菜", before=before, window=4, limit=99)
        assert all(e.scope == GROUP and "香菜" in e.text for e in part)
        found += [e.id for e in part]
        if before is None:
            break
    assert found == [e.id for e in everything]
    # a full page goes on from its last message
    first, after = await repo.search_messages(GROUP, "香菜", before=None, window=999, limit=1)
    assert (len(first), after) == (1, first[0].id)
    page = await core.console.archive_day(GROUP, None, " 香菜 ")
    assert [m.experience.id for m in page.messages] == [e.id for e in everything]
    assert (page.older, page.window) == (None, 20_000)
    assert (await core.console.archive_day(GROUP, None, "")).window == 0


async def test_the_chats_list_reads_each_chats_work_as_its_own_services_do(
    core: Yuji, world: DemoReport
) -> None:
    """One statement for all chats gives what the per-chat reads give: the backlog, the
    last batch, the latest night step by step and its health."""
    from memory_core.storage.consolidation.consolidation_repo import Cut

    await core.nightly.run(scope=GROUP)
    assert await core.consolidation.repo.create(GROUP, Cut(1, 3, 3, 30), "t", core.clock.now())
    chats = await core.console.chats()
    assert [c.scope for c in chats] == [GROUP, PRIVATE]
    for chat in chats:
        status = await core.consolidation.status(chat.scope)
        assert (chat.pending, chat.last_batch) == (status.pending, status.last_batch)
        assert chat.night == await core.nightly.last_run(chat.scope)
    assert chats[0].last_batch is not None
    assert chats[0].night.steps
    assert chats[1].night.steps == ()
