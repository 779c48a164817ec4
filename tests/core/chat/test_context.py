from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memory_core import FakeClock, NewExperience, Settings
from memory_core.chat.context import gather_context, select_recent
from memory_core.chat.fake import Blocks, FakeArchive, FakeBlocks, FakeContext
from memory_core.chat.sources import ChatContextSource
from memory_core.service import Yuji
from memory_core.types import Experience
from tests.core.nightly.seed import fragment

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def exps(ids: list[int]) -> list[Experience]:
    return [
        Experience(
            id=i,
            scope="group:1",
            fingerprint=str(i),
            sender_id="200",
            sender_name="阿明",
            is_bot=False,
            text=f"m{i}",
            segments=[],
            reply_to=None,
            sent_at=T0 + timedelta(seconds=i),
            received_at=T0 + timedelta(seconds=i),
            source="realtime",
        )
        for i in ids
    ]


def test_unsummarised_messages_plus_a_bridge_of_summarised_ones() -> None:
    recent = select_recent(exps(list(range(1, 24))), acked_id=15, limit=20)
    assert [m.id for m in recent.unsummarised] == list(range(16, 24))
    assert [m.id for m in recent.bridge] == [13, 14, 15]


def test_no_bridge_when_unsummarised_messages_overflow_the_window() -> None:
    recent = select_recent(exps(list(range(1, 24))), acked_id=0, limit=20)
    assert [m.id for m in recent.unsummarised] == list(range(4, 24))
    assert recent.bridge == ()


@given(
    st.lists(st.integers(1, 500), unique=True, max_size=60).map(sorted),
    st.integers(0, 500),
    st.integers(0, 30),
)
def test_selection_is_contiguous_and_bounded(ids: list[int], acked: int, limit: int) -> None:
    recent = select_recent(exps(ids), acked_id=acked, limit=limit)
    assert len(recent.unsummarised) <= limit
    assert all(m.id > acked for m in recent.unsummarised)
    assert all(m.id <= acked for m in recent.bridge)
    assert len(recent.bridge) <= 3
    shown = [m.id for m in (*recent.bridge, *recent.unsummarised)]
    assert shown == ids[len(ids) - len(shown) :]


async def test_the_prompt_gets_the_newest_open_summaries_oldest_first(core: Yuji) -> None:
    start = datetime(2026, 11, 20, 8, tzinfo=UTC)
    for i in range(12):
        await fragment(core, "group:1", start + timedelta(hours=i), f"第{i}段")
    source = ChatContextSource(core.memory_repo, core.consolidation)
    assert await source.open_fragments("group:1", 3) == ["第9段", "第10段", "第11段"]
    assert await source.open_fragments("group:1", 0) == []


async def test_the_context_reads_only_its_ports() -> None:
    clock = FakeClock(T0)
    archive = FakeArchive(clock)
    for i in range(1, 6):
        await archive.append(
            NewExperience("group:1", f"fp{i}", "200", f"m{i}", sent_at=T0, sender_name="阿明")
        )
    await archive.append(NewExperience("group:2", "other", "300", "别的群", sent_at=T0))
    view = await gather_context(
        "group:1",
        now=T0,
        recalled=[],
        trigger_id=5,
        trigger_fingerprint="fp5",
        settings=Settings(),
        archive=archive,
        context=FakeContext(acked=2, fragments=["上午聊了猫"]),
        blocks=FakeBlocks(Blocks(states=["阿明在出差"])),
    )
    assert [m.text for m in view.recent.unsummarised] == ["m3", "m4"]
    assert [m.text for m in view.recent.bridge] == ["m1", "m2"]
    assert view.fragments == ("上午聊了猫",)
    assert view.states == ("阿明在出差",)
