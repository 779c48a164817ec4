"""A due follow-up asked in passing (#44, item 4): when its person wakes the persona in
its chat, the reply prompt carries it in its own block (at most one, theirs only);
citing its marker marks it asked; uncited, it comes again on later days, at most three;
a member who asked not to be asked, or a zero budget, gets none. On a real store."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

import pytest

from memory_core import EvidenceRef, FakeClock, NewExperience, Yuji
from memory_core.chat.service import ChatService, Incoming
from memory_core.chat.sources import ChatContextSource
from memory_core.llm.fake import ScriptedLLM, text_response
from memory_core.prompts.chat import FOLLOWUPS_HEADING, marker
from memory_core.storage.chat.chat_repo import ChatRepo

SH = ZoneInfo("Asia/Shanghai")
G1, BOT = "group:1", "10000"
_fp = itertools.count(1)


def local(d: date, hh: int = 10) -> datetime:
    return datetime.combine(d, time(hh), tzinfo=SH).astimezone(UTC)


MONDAY = local(date(2026, 12, 7))
EXAM = local(date(2026, 12, 15), 0)


async def say(core: Yuji, sender: str, name: str, text: str) -> int:
    return await core.archive.append(
        NewExperience(
            scope=G1,
            fingerprint=f"p{next(_fp)}",
            sender_id=sender,
            sender_name=name,
            text=text,
            sent_at=core.clock.now(),
        )
    )


@pytest.fixture
async def exam(core: Yuji, clock: FakeClock) -> int:
    clock.set(MONDAY)
    said = await say(core, "7", "阿哲", "我下周二考四级")
    await say(core, "8", "小周", "加油")
    written = await core.memories.write(
        G1,
        type="event",
        subject="阿哲",
        content="阿哲12月15日考四级",
        evidence=[EvidenceRef(experience_id=said)],
        valid_from=EXAM,
        subject_id="7",
    )
    return written.memory.id


def service(core: Yuji, llm: ScriptedLLM) -> ChatService:
    return ChatService(
        settings=core.live,
        clock=core.clock,
        repo=ChatRepo(core.db),
        archive=core.archive,
        recall=core.recall,
        memories=core.memories,
        context=ChatContextSource(core.memory_repo, core.consolidation),
        llm=llm,
        followups=core.followups,
    )


async def wake(core: Yuji, llm: ScriptedLLM, sender: str, name: str) -> tuple[str, str]:
    """`sender` wakes the persona; (the system prompt it was given, what was sent)."""
    text = "大肥鱼在吗"
    fingerprint = f"w{next(_fp)}"
    await core.archive.append(
        NewExperience(G1, fingerprint, sender, text, sender_name=name, sent_at=core.clock.now())
    )
    await core.archive.flush()
    sent: list[str] = []

    async def send(part: str) -> str:
        sent.append(part)
        return f"bot-{fingerprint}"

    message = Incoming(
        scope=G1,
        fingerprint=fingerprint,
        sender_id=sender,
        sender_name=name,
        text=text,
        sent_at=core.clock.now(),
        self_id=BOT,
        is_private=False,
        mentioned_ids=(BOT,),
    )
    out = await service(core, llm).respond(message, send)
    assert out.kind == "reply"
    return llm.requests[-1].messages[0].content or "", "".join(sent)


async def states(core: Yuji) -> dict[int, tuple[str, int]]:
    return {f.memory.id: (f.state, f.offers) for f in await core.followups.listing(G1)}


async def test_its_person_is_asked_in_passing_and_a_citation_marks_it_asked(
    core: Yuji, clock: FakeClock, exam: int
) -> None:
    clock.set(local(date(2026, 12, 16)))
    llm = ScriptedLLM([text_response("在呢"), text_response(f"在！四级考得怎么样？{marker(exam)}")])
    other, _ = await wake(core, llm, "8", "小周")  # not theirs: nothing
    assert FOLLOWUPS_HEADING not in other
    assert await states(core) == {exam: ("due", 0)}
    system, sent = await wake(core, llm, "7", "阿哲")
    assert f"## {FOLLOWUPS_HEADING}\n#{exam} 阿哲：阿哲12月15日考四级（2026-12-15）" in system
    assert marker(exam) in system
    assert sent == "在！四级考得怎么样？"  # the marker is stripped
    assert await states(core) == {exam: ("asked", 1)}
    again, _ = await wake(core, ScriptedLLM([text_response("嗯嗯")]), "7", "阿哲")
    assert FOLLOWUPS_HEADING not in again  # asked: never offered again


async def test_uncited_it_comes_again_on_at_most_three_days(
    core: Yuji, clock: FakeClock, exam: int
) -> None:
    core.live.current = core.settings.model_copy(update={"followup_window_days": 6})
    shown: list[bool] = []
    for day in (16, 16, 17, 18, 19, 20):
        clock.set(local(date(2026, 12, day)))
        system, _ = await wake(core, ScriptedLLM([text_response("在呢")]), "7", "阿哲")
        shown.append(FOLLOWUPS_HEADING in system)
    assert shown == [True, True, True, True, False, False]  # the 16th counts once
    assert await states(core) == {exam: ("due", 3)}


async def test_a_member_who_asked_not_to_be_asked_and_a_zero_budget_get_none(
    core: Yuji, clock: FakeClock, exam: int
) -> None:
    clock.set(local(date(2026, 12, 16)))
    core.live.current = core.settings.model_copy(update={"prompt_followups_tokens": 0})
    system, _ = await wake(core, ScriptedLLM([text_response("在呢")]), "7", "阿哲")
    assert FOLLOWUPS_HEADING not in system
    assert await states(core) == {exam: ("due", 0)}  # not shown, not counted
    core.live.current = core.live.configured
    await core.followups.repo.set_muted(G1, "7", True, at=clock.now())
    system, _ = await wake(core, ScriptedLLM([text_response("在呢")]), "7", "阿哲")
    assert FOLLOWUPS_HEADING not in system
    assert await states(core) == {exam: ("due", 0)}
