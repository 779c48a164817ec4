"""The nightly `people` step: a card per member of a group whose memories changed that
day, at most `person_cards_per_night` a chat and night, versioned, never across chats;
the reply's people block and whose-word marks read from the same store."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from datetime import datetime

import pytest

from memory_core import FakeClock, Settings, Yuji
from memory_core.llm.base import ChatResponse
from memory_core.llm.fake import LLMRequest, ScriptedLLM, text_response
from memory_core.nightly import StepReport
from memory_core.ops.alerts import RecordingAlertSink
from memory_core.people.cards import PersonCards, name_candidates
from memory_core.storage import PersonCardsRepo
from memory_core.types import EvidenceRef, Memory, NewExperience

from .seed import SCOPE, sh

DAY = "2026-11-20"
OTHER = "group:200"
NAN, BAI, ZHOU = "1000", "1001", "1002"
NAMES = {NAN: "南杉", BAI: "小白", ZHOU: "小周"}


def card_writer(request: LLMRequest) -> ChatResponse:
    """Answers a person-card prompt with a card naming the member and every memory
    line it was shown (so a test can see what the card was built from)."""
    system = request.messages[0].content or ""
    user = request.messages[1].content or ""
    assert "人物卡片" in system, system[:40]
    member = user.split("群友：", 1)[1].split("\n", 1)[0]
    shown = [ln.split("）", 1)[1] for ln in user.splitlines() if ln.startswith("[记忆 ")]
    card = f"{member}：" + "；".join(shown)
    return text_response(json.dumps({"card": card}, ensure_ascii=False))


@pytest.fixture
def llm() -> ScriptedLLM:
    return ScriptedLLM(default=card_writer)


async def open_core(
    settings: Settings, clock: FakeClock, llm: ScriptedLLM, **changes: object
) -> Yuji:
    return await Yuji.open(
        settings.model_copy(update=changes),
        clock=clock,
        llm=llm,
        alert_sink=RecordingAlertSink(),
    )


@pytest.fixture
async def capped(settings: Settings, clock: FakeClock, llm: ScriptedLLM) -> AsyncIterator[Yuji]:
    opened = await open_core(settings, clock, llm, person_cards_per_night=1)
    try:
        yield opened
    finally:
        await opened.close()


_seq = iter(range(1, 1_000_000))


async def say(core: Yuji, scope: str, sender: str, text: str, at: datetime, name: str = "") -> int:
    [exp] = await core.archive.append_many(
        [
            NewExperience(
                scope=scope,
                fingerprint=f"m{next(_seq)}",
                sender_id=sender,
                sender_name=name or NAMES[sender],
                text=text,
                sent_at=at,
            )
        ]
    )
    await core.archive.flush()
    return exp


async def remember(
    core: Yuji, scope: str, about: str, content: str, said_by: Sequence[str], at: datetime
) -> Memory:
    """A memory about member `about`, resting on a message by each of `said_by`."""
    evidence = [
        EvidenceRef(experience_id=await say(core, scope, s, f"{content}（{s}）", at))
        for s in said_by
    ]
    outcome = await core.memories.write(
        scope, type="fact", subject=NAMES[about], content=content, evidence=evidence
    )
    return outcome.memory


def people_step(reports: Sequence[StepReport], scope: str = SCOPE) -> StepReport:
    [report] = [r for r in reports if r.step == "people" and r.scope == scope]
    return report


def card_prompts(llm: ScriptedLLM) -> list[str]:
    return [
        r.messages[1].content or ""
        for r in llm.requests
        if "人物卡片" in (r.messages[0].content or "")
    ]


async def test_a_card_only_for_the_members_whose_memories_changed_that_day(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock
) -> None:
    clock.set(sh(2026, 11, 18, 12, 0))  # 小白's memory changed two days before
    await say(core, SCOPE, NAN, "大家好", sh(2026, 11, 18, 11, 0))
    await remember(core, SCOPE, BAI, "小白养了一只猫", [BAI], sh(2026, 11, 18, 11, 30))
    clock.set(sh(2026, 11, 20, 20, 0))
    own = await remember(core, SCOPE, NAN, "南杉下周考试", [NAN], sh(2026, 11, 20, 19, 0))
    heard = await remember(core, SCOPE, NAN, "南杉要搬去深圳", [BAI], sh(2026, 11, 20, 19, 5))
    assert (own.subject_person, own.word, heard.word) == (NAN, "self-only", "hearsay")
    clock.set(sh(2026, 11, 21, 4, 0))

    report = people_step(await core.nightly.run(day=DAY, scope=SCOPE))

    assert report.outcome == "done", report.detail
    repo = PersonCardsRepo(core.db)
    cards = await repo.current(SCOPE, [NAN, BAI])
    assert set(cards) == {NAN}
    assert cards[NAN].content == "南杉：南杉下周考试；南杉要搬去深圳"
    assert (cards[NAN].version, cards[NAN].day) == (1, DAY)
    [prompt] = card_prompts(llm)
    # whose word each memory is: the member's own, or 小白's (hearsay), by name
    assert f"[记忆 {own.id}]（fact｜本人说）南杉下周考试" in prompt
    assert f"[记忆 {heard.id}]（fact｜小白说）南杉要搬去深圳" in prompt
    assert "小白养了一只猫" not in prompt


async def test_the_cap_per_night_takes_the_most_changed_members_first(
    capped: Yuji, llm: ScriptedLLM, clock: FakeClock
) -> None:
    core = capped
    clock.set(sh(2026, 11, 20, 20, 0))
    await remember(core, SCOPE, BAI, "小白养了一只猫", [BAI], sh(2026, 11, 20, 18, 0))
    await remember(core, SCOPE, NAN, "南杉下周考试", [NAN], sh(2026, 11, 20, 19, 0))
    await remember(core, SCOPE, NAN, "南杉爱吃辣", [NAN], sh(2026, 11, 20, 19, 5))
    clock.set(sh(2026, 11, 21, 4, 0))

    report = people_step(await core.nightly.run(day=DAY, scope=SCOPE))

    assert report.outcome == "done"
    assert "1 left for another night" in report.detail
    assert len(card_prompts(llm)) == 1
    cards = await PersonCardsRepo(core.db).current(SCOPE, [NAN, BAI])
    assert set(cards) == {NAN}


async def test_a_changed_card_is_the_next_version_and_the_old_one_stays(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock
) -> None:
    clock.set(sh(2026, 11, 20, 20, 0))
    await remember(core, SCOPE, NAN, "南杉下周考试", [NAN], sh(2026, 11, 20, 19, 0))
    clock.set(sh(2026, 11, 21, 4, 0))
    await core.nightly.run(day=DAY, scope=SCOPE)
    clock.set(sh(2026, 11, 21, 20, 0))
    await remember(core, SCOPE, NAN, "南杉考完试了", [NAN], sh(2026, 11, 21, 19, 0))
    clock.set(sh(2026, 11, 22, 4, 0))

    report = people_step(await core.nightly.run(day="2026-11-21", scope=SCOPE))

    assert report.outcome == "done"
    history = await PersonCardsRepo(core.db).history(SCOPE, NAN)
    assert [(c.version, c.day) for c in history] == [(1, DAY), (2, "2026-11-21")]
    assert history[0].content == "南杉：南杉下周考试"
    assert history[1].content == "南杉：南杉下周考试；南杉考完试了"
    # the second night was shown the card it replaces
    assert "现在的卡片：\n南杉：南杉下周考试" in card_prompts(llm)[-1]
    # a night that changes nothing about them asks nothing and writes no version
    clock.set(sh(2026, 11, 23, 4, 0))
    asked = len(llm.requests)
    report = people_step(await core.nightly.run(day="2026-11-22", scope=SCOPE))
    assert report.outcome == "skipped"
    assert len(llm.requests) == asked
    assert len(await PersonCardsRepo(core.db).history(SCOPE, NAN)) == 2


async def test_a_member_of_two_groups_has_two_cards_that_never_meet_and_a_private_chat_none(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock
) -> None:
    clock.set(sh(2026, 11, 20, 20, 0))
    await remember(core, SCOPE, NAN, "南杉下周考试", [NAN], sh(2026, 11, 20, 19, 0))
    await remember(core, OTHER, NAN, "南杉在学吉他", [NAN], sh(2026, 11, 20, 19, 0))
    private = "private:1000"
    await say(core, private, NAN, "在吗", sh(2026, 11, 20, 18, 0))
    await core.memories.write(
        private,
        type="fact",
        subject=NAN,
        content="南杉私下说他失眠",
        evidence=[
            EvidenceRef(
                experience_id=await say(core, private, NAN, "我失眠", sh(2026, 11, 20, 18, 1))
            )
        ],
    )
    clock.set(sh(2026, 11, 21, 4, 0))

    reports = await core.nightly.run(day=DAY)

    assert people_step(reports, private).outcome == "skipped"
    repo = PersonCardsRepo(core.db)
    here = await repo.current(SCOPE, [NAN])
    there = await repo.current(OTHER, [NAN])
    assert here[NAN].content == "南杉：南杉下周考试"
    assert there[NAN].content == "南杉：南杉在学吉他"
    assert await repo.current(private, [NAN]) == {}
    for prompt in card_prompts(llm):
        assert "失眠" not in prompt
        assert ("下周考试" in prompt) != ("吉他" in prompt)


async def test_the_reply_view_names_the_speaker_of_hearsay_by_their_current_name(
    core: Yuji, clock: FakeClock
) -> None:
    clock.set(sh(2026, 11, 20, 20, 0))
    await say(core, SCOPE, NAN, "嗨", sh(2026, 11, 20, 18, 0))
    heard = await remember(core, SCOPE, NAN, "南杉下个月搬去深圳", [ZHOU], sh(2026, 11, 20, 19, 0))
    own = await remember(core, SCOPE, NAN, "南杉下周考试", [NAN], sh(2026, 11, 20, 19, 1))
    await say(core, SCOPE, ZHOU, "改个名", sh(2026, 11, 20, 19, 30), name="周周")  # renamed
    await PersonCardsRepo(core.db).append(
        SCOPE, NAN, "下周考试\n（周周说）要搬去深圳", DAY, clock.now()
    )
    await PersonCardsRepo(core.db).append(OTHER, BAI, "别的群的小白", DAY, clock.now())

    view = await PersonCards(core.db).prompt_view(
        SCOPE, asker=ZHOU, mentioned=(), text="南杉是不是要搬家了", memories=[heard, own]
    )

    assert (view.words[heard.id].subject, view.words[heard.id].said) == ("南杉", "周周说")
    assert view.words[own.id].said == "本人说"
    # 南杉 is named in the text: their card comes (小周 has none; 小白's is another chat's)
    assert view.cards == (("南杉", "下周考试\n（周周说）要搬去深圳"),)
    private = await PersonCards(core.db).prompt_view(
        "private:1000", asker=NAN, text="南杉", memories=[]
    )
    assert private.cards == ()


def test_names_in_a_wake_are_found_without_spaces() -> None:
    found = name_candidates("@小白 南杉是不是要搬家了")
    assert {"小白", "南杉", "南杉是"} <= found
    assert "南" not in found


async def test_the_reply_prompt_carries_the_askers_card_after_the_memories(
    core: Yuji, clock: FakeClock
) -> None:
    from memory_core.chat.service import Incoming

    clock.set(sh(2026, 11, 21, 12, 0))
    await say(core, SCOPE, NAN, "嗨", sh(2026, 11, 21, 11, 0))
    await PersonCardsRepo(core.db).append(SCOPE, NAN, "爱吃辣\n下周考试", DAY, clock.now())
    chat_llm = ScriptedLLM([text_response("在呢")])
    core.chat.llm = chat_llm
    text = "大肥鱼，我最近怎么样"
    await say(core, SCOPE, NAN, text, clock.now())
    incoming = Incoming(
        scope=SCOPE,
        fingerprint="wake-1",
        sender_id=NAN,
        sender_name="南杉",
        text=text,
        sent_at=clock.now(),
        self_id="10000",
        is_private=False,
        mentioned_ids=("10000",),
    )

    async def send(_: str) -> str:
        return "sent-1"

    out = await core.chat.respond(incoming, send)

    assert out.kind == "reply"
    system = chat_llm.requests[-1].messages[0].content or ""
    assert "【南杉】爱吃辣；下周考试" in system
    assert system.index("现在是 ") < system.index("【南杉】")
    assert system.index("## 最近的聊天记录") > system.index("【南杉】")
    budget = core.settings.prompt_people_tokens
    block = system.split("## 相关的人", 1)[1].split("\n\n", 1)[0]
    assert len(block) < budget * 4


async def test_a_forgotten_speaker_is_left_out_of_the_card_prompt_never_named_by_id(
    core: Yuji, llm: ScriptedLLM, clock: FakeClock
) -> None:
    clock.set(sh(2026, 11, 20, 20, 0))
    await say(core, SCOPE, NAN, "大家好", sh(2026, 11, 20, 18, 0))
    told = await remember(core, SCOPE, NAN, "南杉要搬去深圳", [BAI, ZHOU], sh(2026, 11, 20, 19, 0))
    await core.porting.forget_person(SCOPE, ZHOU, requested_by=ZHOU)  # 小周 has no name here
    clock.set(sh(2026, 11, 21, 4, 0))

    report = people_step(await core.nightly.run(day=DAY, scope=SCOPE))

    assert report.outcome == "done", report.detail
    [prompt] = card_prompts(llm)
    assert f"[记忆 {told.id}]（fact｜小白说）南杉要搬去深圳" in prompt
    assert ZHOU not in prompt
