"""Asking unprompted (#44, item 5) on a real store with a fake clock and a scripted
model: sent once where allowed (a private chat by default, a group its admin turned
on), in the daytime only, never in a muted chat, never within the quiet time after
someone spoke, at most one per chat per day and one per person per week, never after
`/forget` or `mute-me`; a model down, an out-of-character text or a platform that does
not take it sends nothing and loses nothing; a reply within a day marks it answered."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core import EvidenceRef, FakeClock, NewExperience, Settings, Yuji
from memory_core.chat.guard import OutOfCharacterGuard
from memory_core.errors import ConfigError, LLMUnavailable
from memory_core.followups.due import FollowUp, window_of
from memory_core.followups.unprompted import Sent, Unprompted, choose, in_hours
from memory_core.llm.fake import ScriptedLLM, text_response
from tests.core.followups.test_due import plan as plan_memory

SH = ZoneInfo("Asia/Shanghai")
P7, G1, G2 = "private:7", "group:1", "group:2"
_fp = itertools.count(1)


def local(d: date, hh: int = 10, mm: int = 0) -> datetime:
    return datetime.combine(d, time(hh, mm), tzinfo=SH).astimezone(UTC)


MONDAY = local(date(2026, 12, 7))
EXAM = local(date(2026, 12, 15), 0)
WEDNESDAY = date(2026, 12, 16)


async def say(core: Yuji, scope: str, sender: str, text: str, *, bot: bool = False) -> int:
    return await core.archive.append(
        NewExperience(
            scope,
            f"u{next(_fp)}",
            sender,
            text,
            sender_name={"7": "阿哲", "8": "小周", "9": "阿梅"}.get(sender, "大肥鱼"),
            sent_at=core.clock.now(),
            is_bot=bot,
        )
    )


async def plan(core: Yuji, scope: str, who: str, content: str = "我下周二考四级") -> int:
    said = await say(core, scope, who, content)
    written = await core.memories.write(
        scope,
        type="event",
        subject={"7": "阿哲", "8": "小周", "9": "阿梅"}[who],
        content=f"{content}（12月15日）",
        evidence=[EvidenceRef(experience_id=said)],
        valid_from=EXAM,
        subject_id=who,
    )
    return written.memory.id


class Platform:
    """The plain send: records what was sent where; `up` False refuses."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self.up = True

    async def send(self, scope: str, text: str) -> bool:
        if self.up:
            self.sent.append((scope, text))
        return self.up


def unprompted(core: Yuji, llm: ScriptedLLM | None) -> Unprompted:
    guard = OutOfCharacterGuard(core.settings.ooc_patterns)
    return Unprompted(
        core.followups,
        llm,
        ok=lambda text: guard.check(text).ok,
        persona=lambda: "你是大肥鱼，说话带点鱼味。",
        is_muted=core.chat_commands.is_muted,
        recent=core.archive.recent,
    )


def model(text: str = "阿哲，四级考得怎么样呀？") -> ScriptedLLM:
    return ScriptedLLM(default=text_response(text))


@pytest.fixture
async def plans(core: Yuji, clock: FakeClock) -> dict[str, int]:
    """阿哲 in his private chat; 小周 in group 1 (off); 阿梅 in group 2 (turned on)."""
    clock.set(MONDAY)
    found = {
        P7: await plan(core, P7, "7"),
        G1: await plan(core, G1, "8"),
        G2: await plan(core, G2, "9"),
    }
    await core.followups.repo.set_chat(G2, True, "admin", at=clock.now())
    return found


async def test_sent_once_where_allowed_in_the_daytime(
    core: Yuji, clock: FakeClock, plans: dict[str, int]
) -> None:
    platform, llm = Platform(), model()
    job = unprompted(core, llm)
    for hh, mm in ((9, 59), (21, 30), (23, 0)):
        clock.set(local(WEDNESDAY, hh, mm))
        assert await job.run_once(platform.send) == []
    clock.set(local(WEDNESDAY, 10, 0))
    asked = await job.run_once(platform.send)
    assert [(a.scope, a.memory_id) for a in asked] == [(G2, plans[G2]), (P7, plans[P7])]
    assert [scope for scope, _ in platform.sent] == [G2, P7]
    assert llm.requests[0].scope == G2
    system = llm.requests[0].messages[0].content or ""
    assert "阿梅" in system
    assert "我下周二考四级（12月15日）" in system
    states = {f.memory.id: f.state for f in await core.followups.listing()}
    assert states == {plans[P7]: "asked", plans[G1]: "due", plans[G2]: "asked"}
    for later in (local(WEDNESDAY, 15), local(WEDNESDAY + timedelta(days=1), 11)):
        clock.set(later)
        assert await job.run_once(platform.send) == []
    assert len(platform.sent) == 2
    [row] = await core.followups.repo.plans(P7)
    assert row.record is not None
    assert row.record.sent_text == "阿哲，四级考得怎么样呀？"


async def test_never_in_a_muted_chat_a_quiet_time_a_muted_person_or_after_forget(
    core: Yuji, clock: FakeClock, plans: dict[str, int]
) -> None:
    platform = Platform()
    job = unprompted(core, model())
    clock.set(local(WEDNESDAY, 10))
    await core.chat_commands.mute(P7)
    await core.followups.repo.set_muted(G2, "9", True, at=clock.now())
    assert await job.run_once(platform.send) == []
    await core.chat_commands.unmute(P7)
    await say(core, P7, "999", "（机器人的话不算有人在聊）", bot=True)
    clock.set(local(WEDNESDAY, 11))
    await say(core, P7, "7", "在吗")
    clock.set(local(WEDNESDAY, 11, 5))
    assert await job.run_once(platform.send) == []  # he spoke 5 minutes ago
    await core.memories.forget(P7, plans[P7], reason="/forget")
    clock.set(local(WEDNESDAY, 12))
    assert await job.run_once(platform.send) == []
    assert platform.sent == []


async def test_a_model_down_an_out_of_character_text_or_a_refusing_platform_lose_nothing(
    core: Yuji, clock: FakeClock, plans: dict[str, int]
) -> None:
    await core.followups.repo.set_chat(G2, False, "admin", at=clock.now())
    platform = Platform()
    clock.set(local(WEDNESDAY, 10))
    assert await unprompted(core, None).run_once(platform.send) == []
    down = ScriptedLLM([LLMUnavailable("down")])
    assert await unprompted(core, down).run_once(platform.send) == []
    assert len(down.requests) == 1
    refused = model("抱歉，我无法回答这个问题")
    assert await unprompted(core, refused).run_once(platform.send) == []
    platform.up = False
    assert await unprompted(core, model()).run_once(platform.send) == []
    assert [f.state for f in await core.followups.listing(P7)] == ["due"]
    platform.up = True
    clock.set(local(WEDNESDAY + timedelta(days=1), 10))
    assert [a.scope for a in await unprompted(core, model()).run_once(platform.send)] == [P7]


async def test_one_per_chat_a_day_and_one_per_person_a_week(core: Yuji, clock: FakeClock) -> None:
    clock.set(MONDAY)
    own = await plan(core, P7, "7")
    second = await plan(core, P7, "7", "我下周二还要面试")
    in_group = await plan(core, G2, "7", "我下周二考四级哦")
    other = await plan(core, G2, "9")
    await core.followups.repo.set_chat(G2, True, "admin", at=clock.now())
    core.live.current = core.settings.model_copy(update={"followup_window_days": 9})
    platform, job = Platform(), unprompted(core, model())
    sent: list[int] = []
    for day in range(9):
        clock.set(local(WEDNESDAY + timedelta(days=day), 10))
        sent += [a.memory_id for a in await job.run_once(platform.send)]
    # day 1: 阿哲's oldest in the group (G2 sorts first), not his private one (a week);
    # 阿梅 the day after in G2; 阿哲 again only a week later, in his private chat.
    assert sent == [min(in_group, other), max(in_group, other), own]
    assert second not in sent


async def test_a_reply_within_a_day_marks_it_answered(
    core: Yuji, clock: FakeClock, plans: dict[str, int]
) -> None:
    await core.followups.repo.set_chat(G2, False, "admin", at=clock.now())
    platform, job = Platform(), unprompted(core, model())
    clock.set(local(WEDNESDAY, 10))
    assert len(await job.run_once(platform.send)) == 1
    clock.set(local(WEDNESDAY, 20))
    await say(core, P7, "7", "还行吧，听力有点难")
    clock.set(local(WEDNESDAY, 20, 10))
    await job.run_once(platform.send)
    assert [f.state for f in await core.followups.listing(P7)] == ["answered"]


# --- the pure parts ---------------------------------------------------------------------


def test_the_hours_are_local_start_included_end_not() -> None:
    assert in_hours(local(WEDNESDAY, 10), SH, "10:00-21:30")
    assert not in_hours(local(WEDNESDAY, 21, 30), SH, "10:00-21:30")
    late = datetime(2026, 12, 16, 14, tzinfo=UTC)  # 22:00 in Shanghai, 14:00 in UTC
    assert not in_hours(late, SH, "10:00-21:30")
    assert in_hours(late, ZoneInfo("UTC"), "10:00-21:30")
    last_minute = datetime(2026, 12, 16, 15, 59, 30, tzinfo=UTC)  # 23:59:30 in Shanghai
    assert in_hours(last_minute, SH, "00:00-24:00")
    assert not in_hours(last_minute, SH, "00:00-23:59")


def test_the_hours_setting_says_what_it_takes() -> None:
    assert Settings(followup_hours="00:00-24:00").followup_hours == "00:00-24:00"
    for wrong in ("24:00-10:00", "10:00", "9:00-21:00", "21:00-10:00", "10:00-24:30"):
        with pytest.raises(ConfigError):
            Settings(followup_hours=wrong)


@given(
    st.lists(st.tuples(st.sampled_from([P7, G1, G2]), st.sampled_from("789"), st.integers(0, 20))),
    st.integers(0, 20),
)
def test_never_twice_a_day_in_a_chat_nor_twice_a_week_to_a_person(
    history: list[tuple[str, str, int]], hours_later: int
) -> None:
    now = local(WEDNESDAY, 10) + timedelta(hours=hours_later)
    sent = [Sent(scope, person, now - timedelta(hours=ago)) for scope, person, ago in history]
    due = [
        _due(i, scope, person)
        for i, (scope, person) in enumerate(itertools.product([P7, G1, G2], "789"))
    ]
    for scope in (P7, G1, G2):
        chosen = choose(due, scope=scope, sent=sent, muted_people={"8"}, now=now, zone=SH)
        if chosen is None:
            continue
        assert chosen.memory.scope == scope
        assert chosen.person != "8"
        today = now.astimezone(SH).date()
        assert not any(s.scope == scope and s.at.astimezone(SH).date() == today for s in sent)
        assert not any(s.person == chosen.person and now - s.at < timedelta(days=7) for s in sent)


def _due(i: int, scope: str, person: str) -> FollowUp:
    memory = replace(plan_memory(EXAM, memory_id=i), scope=scope, subject_person=person)
    return FollowUp(memory, person, window_of(EXAM, SH, 3), "due")


async def test_a_restored_pack_of_due_plans_asks_one_a_day_not_a_burst(
    core: Yuji, clock: FakeClock
) -> None:
    clock.set(MONDAY)
    source = "group:9"
    for who in ("7", "8", "9"):
        await plan(core, source, who, f"我下周二要去面试{who}")
    pack = await core.porting.export(source)
    await core.porting.import_pack(pack, G2)
    await core.followups.repo.set_chat(G2, True, "admin", at=clock.now())
    restored = await core.followups.listing(G2)
    assert len(restored) == 3  # imported memories count like any others
    platform, job = Platform(), unprompted(core, model())
    per_day: list[int] = []
    for day in range(3):
        clock.set(local(WEDNESDAY + timedelta(days=day), 10))
        per_day.append(len(await job.run_once(platform.send)))
        clock.set(local(WEDNESDAY + timedelta(days=day), 15))
        per_day[-1] += len(await job.run_once(platform.send))
    assert per_day == [1, 1, 1]
    assert {scope for scope, _ in platform.sent} == {G2}
