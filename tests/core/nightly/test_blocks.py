"""What the nightly run hands to the chat prompt."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from memory_core import FakeClock, Yuji
from memory_core.llm.fake import ScriptedLLM
from memory_core.memories.fake import FakeMemories
from memory_core.nightly.blocks import active_state_lines, background_days, memory_days
from memory_core.nightly.days import parse_cutoff
from memory_core.nightly.ports import FakeScopes
from memory_core.nightly.service import NightlyService
from memory_core.ops.alerts import RecordingAlertSink
from memory_core.types import EvidenceRef, Memory, Recalled

from .seed import SCOPE, archive, day_script, fragment, sh


def mem(id: int, *, valid_from: datetime | None, valid_to: datetime | None, **kw: object) -> Memory:
    base: dict[str, object] = {
        "id": id,
        "scope": SCOPE,
        "type": "state",
        "subject": "南杉",
        "content": f"状态{id}",
        "importance": 0.5,
        "confidence": 0.8,
        "status": "active",
        "valid_from": valid_from,
        "valid_to": valid_to,
        "version": 1,
        "origin": "model",
        "created_at": datetime(2026, 11, 1, tzinfo=UTC),
        "updated_at": datetime(2026, 11, 1, tzinfo=UTC),
        "last_accessed_at": None,
        "hit_count": 0,
        "pinned": False,
        "starred": False,
    }
    base.update(kw)
    return Memory(**base)  # type: ignore[arg-type]


def test_active_states_are_those_valid_now_with_their_deadline() -> None:
    now = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    lines = active_state_lines(
        [
            mem(1, valid_from=now - timedelta(days=3), valid_to=now + timedelta(days=2)),
            mem(2, valid_from=now - timedelta(days=3), valid_to=now - timedelta(hours=1)),
            mem(3, valid_from=now + timedelta(days=1), valid_to=None),
            mem(4, valid_from=now - timedelta(days=1), valid_to=None, subject="group"),
            mem(5, valid_from=None, valid_to=None, status="cold"),
        ],
        now,
        ZoneInfo("Asia/Shanghai"),
    )
    assert lines == ("南杉：状态1（到 11-23）", "状态4")


def test_background_days_need_several_hits_from_an_older_day() -> None:
    d = date(2026, 11, 1)
    older = date(2026, 10, 20)
    assert background_days([older, older, d], before=date(2026, 11, 18)) == [older]
    assert background_days([older, d], before=date(2026, 11, 18)) == []
    assert background_days([older, older, None], before=older) == []
    tie = background_days([d, d, older, older], before=date(2026, 11, 18))
    assert tie == [d, older]


async def test_blocks_are_empty_before_any_night(core: Yuji, clock: FakeClock) -> None:
    blocks = await core.nightly.blocks(SCOPE, clock.now(), [])
    assert blocks.states == blocks.cards == blocks.timeline == blocks.recent_diaries == ()
    assert blocks.background_diary is None


async def test_blocks_after_nights_carry_cards_diaries_and_an_older_background_day(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock
) -> None:
    # An old day with two events, then four recent days with diaries.
    await fragment(core, SCOPE, sh(2026, 11, 10, 21, 0), "南杉第一次带猫来群里。")
    clock.set(sh(2026, 11, 11, 4, 0))
    llm.push(
        *day_script(
            diary="南杉第一次把猫带进群里。",
            changes=[{"kind": "relationships", "action": "add", "text": "南杉和小白是同学"}],
            timeline="第一次见到南杉的猫",
        )
    )
    await core.nightly.run(scope=SCOPE)
    for day in (15, 16, 17, 18):
        await fragment(core, SCOPE, sh(2026, 11, day, 21, 0), f"{day}日的事。")
        clock.set(sh(2026, 11, day + 1, 4, 0))
        llm.push(*day_script(diary=f"{day}日小传"))
        await core.nightly.run(scope=SCOPE)
    [exp1, exp2] = await archive(core, SCOPE, sh(2026, 11, 10, 22, 0), ["猫叫年糕", "猫三岁"])
    recalled: list[Recalled] = []
    for exp, content in ((exp1, "南杉的猫叫年糕"), (exp2, "南杉的猫三岁")):
        written = await core.memories.write(
            SCOPE,
            type="fact",
            subject="南杉",
            content=content,
            evidence=[EvidenceRef(experience_id=exp)],
        )
        recalled.append(Recalled(written.memory, "lexical", 1.0, "exact words"))

    blocks = await core.nightly.blocks(SCOPE, clock.now(), recalled)

    assert blocks.cards == (("relationships", "南杉和小白是同学"),)
    assert blocks.timeline == ("2026-11-10：第一次见到南杉的猫",)
    assert [d for d, _ in blocks.recent_diaries] == ["2026-11-16", "2026-11-17", "2026-11-18"]
    assert blocks.background_diary == ("2026-11-10", "南杉第一次把猫带进群里。")
    # One recalled memory from that day is not enough.
    single = await core.nightly.blocks(SCOPE, clock.now(), recalled[:1])
    assert single.background_diary is None
    # Another chat's memories never pull a diary in.
    foreign = [Recalled(mem(9, valid_from=None, valid_to=None, scope="group:9"), "lexical", 1, "")]
    assert (await core.nightly.blocks(SCOPE, clock.now(), foreign * 2)).background_diary is None


def test_memory_days_use_the_earliest_evidence_else_validity() -> None:
    tz = ZoneInfo("Asia/Shanghai")
    cutoff = parse_cutoff("04:00")
    with_evidence = mem(1, valid_from=sh(2026, 11, 18, 12, 0), valid_to=None)
    without = mem(2, valid_from=sh(2026, 11, 18, 2, 0), valid_to=None)
    got = memory_days([with_evidence, without], {1: sh(2026, 11, 10, 21, 0)}, tz, cutoff)
    assert got == [date(2026, 11, 10), date(2026, 11, 17)]


async def test_the_night_reads_chats_and_states_through_its_ports(
    core: Yuji, clock: FakeClock
) -> None:
    memories = FakeMemories(clock)
    service = NightlyService(
        core.db,
        core.live,
        clock,
        memory_repo=core.memory_repo,
        memories=memories,
        archive=FakeScopes(SCOPE, "group:9"),
        llm=None,
        alerts=RecordingAlertSink(),
    )
    await memories.write(
        SCOPE, type="state", subject="阿明", content="在出差", evidence=[EvidenceRef(1)]
    )
    assert {SCOPE, "group:9"} <= set(await service.scopes())
    blocks = await service.blocks(SCOPE, clock.now(), [])
    assert blocks.states == ("阿明：在出差",)
