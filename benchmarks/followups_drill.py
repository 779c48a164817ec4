"""The follow-ups drill: a month of chat in three chats on a fake clock.

    .venv/bin/python -m benchmarks.followups_drill [--days 30] [--seed 7] [--json]

A fresh SQLite store; a private chat (阿哲), a group with follow-ups on (three
members) and a group without (three members). Each day, at random daytime minutes,
members chat, and some tell of their own plans 1 to 8 days ahead ("我3月12号面试");
each plan is written as consolidation would (an event on that day, their message as
evidence). Some plans are then cancelled (retracted), moved (superseded by a new date)
or forgotten (`/forget`); the group with follow-ups on is muted for three days. Members
wake the persona now and then in the groups, and with every message in the private
chat (a private chat always addresses the persona): a due follow-up of theirs is
offered in passing (`core.followups.offer`) and, two times in three, the reply cites
it (asked). Every `YUJI_FOLLOWUP_CHECK_S` (10 min) the unprompted job runs
(`Unprompted.run_once`, a scripted model, the real guard).

Reported: plans told, follow-ups that became due, and what became of each: asked
unprompted (per chat), asked in passing, offered but never cited by the reply (the
model's choice), still due at the end, and expired unasked: crowded out (each time it
could have been asked, another follow-up of the chat or person was), in the group
without follow-ups and never woken for, or held by the caps, a mute or the quiet time
and never woken for.

The violations are recounted from the drill's own log and its own knowledge of plans,
mutes, hours and caps (not from the code under test), and must all be 0: sends at
night, in a muted chat, after the plan ended (cancelled, moved, forgotten), asked twice
for one plan (either way), two in one chat on one local day, two to one person within
a week, any in the group without follow-ups; and the two ways a due follow-up can be
lost: a look of the job at which the rules allowed sending one in a chat and nothing
was sent there (`passed_over`), and a wake by its person while it was due that was
offered nothing (`woken_offered_nothing`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from memory_core import EvidenceRef, FakeClock, NewExperience, Settings, Yuji
from memory_core.chat.guard import OutOfCharacterGuard
from memory_core.followups import Unprompted
from memory_core.followups.due import MAX_OFFERS
from memory_core.llm.fake import ScriptedLLM, text_response
from memory_core.vectors import FakeEmbedder

SH = ZoneInfo("Asia/Shanghai")
START = date(2026, 3, 1)
PRIVATE, ON, OFF = "private:1", "group:2", "group:3"
MEMBERS = {PRIVATE: {"1": "阿哲"}, ON: {"2": "小周", "3": "阿梅", "4": "老王"}}
MEMBERS[OFF] = {"5": "小林", "6": "大刘", "7": "阿珍"}
THINGS = ("考四级", "面试", "体检", "搬家", "去医院复查", "考驾照", "出差回来", "看演唱会")
TICK = timedelta(minutes=10)
MUTED_DAYS = (10, 11, 12)
"""Days of the month the group with follow-ups on is muted (whole local days)."""


def local(day: date, minute: int) -> datetime:
    return datetime.combine(day, time(0), tzinfo=SH).astimezone(UTC) + timedelta(minutes=minute)


@dataclass
class Plan:
    scope: str
    person: str
    memory_id: int
    day: date
    ended_at: datetime | None = None
    """Cancelled, moved or forgotten: no follow-up after this."""
    offered_days: set[date] = field(default_factory=set[date])
    asked: list[tuple[datetime, str]] = field(default_factory=list[tuple[datetime, str]])
    """(when, "unprompted" | "in passing")."""
    crowded: int = 0
    """Looks of the job, or wakes by its person, at which it could have been asked but
    another follow-up of the chat (or of the person) was."""

    def due_on(self, today: date, window_days: int) -> bool:
        """The drill's own reading of the window: the days after the plan's day."""
        return 1 <= (today - self.day).days <= window_days

    def open_at(self, at: datetime, window_days: int) -> bool:
        """Due at `at`, not ended and not asked yet."""
        ended = self.ended_at is not None and self.ended_at <= at
        return self.due_on(at.astimezone(SH).date(), window_days) and not ended and not self.asked


@dataclass
class Drill:
    core: Yuji
    clock: FakeClock
    rng: random.Random
    settings: Settings
    plans: dict[int, Plan] = field(default_factory=dict[int, Plan])
    sends: list[tuple[datetime, str, str]] = field(default_factory=list[tuple[datetime, str, str]])
    spoken: list[tuple[datetime, str]] = field(default_factory=list[tuple[datetime, str]])
    """(when, chat) of every member's message."""
    passed_over: int = 0
    woken_offered_nothing: int = 0
    fingerprints: int = 0

    @property
    def window_days(self) -> int:
        return self.settings.followup_window_days

    async def say(self, scope: str, person: str, text: str) -> int:
        self.fingerprints += 1
        self.spoken.append((self.clock.now(), scope))
        return await self.core.archive.append(
            NewExperience(
                scope,
                f"d{self.fingerprints}",
                person,
                text,
                sender_name=MEMBERS[scope][person],
                sent_at=self.clock.now(),
            )
        )

    async def tell_plan(self, scope: str, person: str, today: date) -> None:
        day = today + timedelta(days=self.rng.randint(1, 8))
        thing = self.rng.choice(THINGS)
        said = await self.say(scope, person, f"我{day.month}月{day.day}号{thing}")
        written = await self.core.memories.write(
            scope,
            type="event",
            subject=MEMBERS[scope][person],
            content=f"{MEMBERS[scope][person]}{day.month}月{day.day}日{thing}",
            evidence=[EvidenceRef(experience_id=said)],
            valid_from=datetime.combine(day, time(0), tzinfo=SH).astimezone(UTC),
            subject_id=person,
        )
        self.plans[written.memory.id] = Plan(scope, person, written.memory.id, day)

    async def change_one(self, today: date) -> None:
        """Cancel, move or forget an open plan still ahead."""
        now = self.clock.now()
        open_ = [p for p in self.plans.values() if p.ended_at is None and p.day > today]
        if not open_:
            return
        plan = self.rng.choice(open_)
        how = self.rng.choice(("cancel", "move", "forget"))
        memories = self.core.memories
        if how == "cancel":
            await self.say(plan.scope, plan.person, "那个安排取消了")
            await memories.retract(plan.scope, plan.memory_id, reason="取消", changed_by="model")
        elif how == "forget":
            await memories.forget(plan.scope, plan.memory_id, reason="/forget")
        else:
            day = plan.day + timedelta(days=self.rng.randint(1, 3))
            said = await self.say(plan.scope, plan.person, f"改到{day.month}月{day.day}号了")
            new = await memories.write(
                plan.scope,
                type="event",
                subject=MEMBERS[plan.scope][plan.person],
                content=f"改到{day.month}月{day.day}日",
                evidence=[EvidenceRef(experience_id=said)],
                valid_from=datetime.combine(day, time(0), tzinfo=SH).astimezone(UTC),
                subject_id=plan.person,
            )
            await memories.supersede(
                plan.scope, plan.memory_id, new.memory.id, reason="改期", changed_by="model"
            )
            self.plans[new.memory.id] = Plan(plan.scope, plan.person, new.memory.id, day)
        plan.ended_at = now

    async def wake(self, scope: str, person: str) -> None:
        now = self.clock.now()
        today = now.astimezone(SH).date()
        mine = [
            p
            for p in self.plans.values()
            if p.scope == scope and p.person == person and p.open_at(now, self.window_days)
            if len(p.offered_days) < MAX_OFFERS or today in p.offered_days
        ]
        offered = await self.core.followups.offer(scope, person, now)
        if offered is None:
            self.woken_offered_nothing += bool(mine)
            return
        plan = self.plans[offered.memory.id]
        for other in mine:
            other.crowded += other is not plan
        plan.offered_days.add(today)
        if self.rng.random() < 2 / 3:
            await self.core.followups.mark_asked(scope, offered.memory.id)
            plan.asked.append((now, "in passing"))

    def sendable(self, scope: str, at: datetime) -> list[Plan]:
        """The plans the rules allow sending in `scope` at `at`, by the drill's own log."""
        local_at = at.astimezone(SH)
        start, _, end = self.settings.followup_hours.partition("-")
        if scope == OFF or not start <= f"{local_at:%H:%M}" < end:
            return []
        if scope == ON and (local_at.date() - START).days in MUTED_DAYS:
            return []
        quiet = timedelta(seconds=self.settings.followup_quiet_s)
        if any(s == scope and at - quiet < t <= at for t, s in self.spoken):
            return []
        unprompted = [
            (when, p) for p in self.plans.values() for when, how in p.asked if how == "unprompted"
        ]
        today = local_at.date()
        if any(p.scope == scope and when.astimezone(SH).date() == today for when, p in unprompted):
            return []
        week = {p.person for when, p in unprompted if at - when < timedelta(days=7)}
        return [
            p
            for p in self.plans.values()
            if p.scope == scope and p.person not in week and p.open_at(at, self.window_days)
        ]

    async def look(self, job: Unprompted) -> None:
        """One look of the job; what it could have sent is recounted first."""
        now = self.clock.now()
        could = {scope: self.sendable(scope, now) for scope in (PRIVATE, ON)}
        before = len(self.sends)
        asked = {(a.scope, a.text): a.memory_id for a in await job.run_once(self.send)}
        for index, (at, scope, text) in enumerate(self.sends[before:], before):
            memory_id = asked[(scope, text)]  # what the platform got is what the job says
            self.sends[index] = (at, scope, f"{text}#{memory_id}")
            self.plans[memory_id].asked.append((at, "unprompted"))
        sent_in = {scope for _, scope, _ in self.sends[before:]}
        for scope, plans in could.items():
            for plan in plans:
                plan.crowded += scope in sent_in and not plan.asked
            self.passed_over += bool(plans) and scope not in sent_in

    async def send(self, scope: str, text: str) -> bool:
        self.sends.append((self.clock.now(), scope, text))
        return True


async def day_of(drill: Drill, job: Unprompted, today: date, index: int) -> None:
    rng, core = drill.rng, drill.core
    events: list[tuple[int, str, str, str]] = []
    for scope, members in MEMBERS.items():
        for person in members:
            for _ in range(rng.randint(0, 3)):
                kind = rng.choices(("chat", "plan", "wake", "change"), (8, 2, 2, 0.4))[0]
                events.append((rng.randint(8 * 60, 23 * 60), kind, scope, person))
    events.sort()
    if index == MUTED_DAYS[0]:
        drill.clock.set(local(today, 0))
        await core.chat_commands.mute(ON, f"{len(MUTED_DAYS)}天")
    minute = 0
    for at, kind, scope, person in [*events, (24 * 60, "end", "", "")]:
        while minute < at:  # the job looks every tick up to the event
            drill.clock.set(local(today, minute))
            await drill.look(job)
            minute += TICK.seconds // 60
        drill.clock.set(local(today, at))
        if kind == "chat":
            await drill.say(scope, person, "哈哈哈")
        elif kind == "plan":
            await drill.tell_plan(scope, person, today)
        elif kind == "change":
            await drill.change_one(today)
        if kind == "wake" or (scope == PRIVATE and kind in ("chat", "plan")):
            await drill.wake(scope, person)


def violations(drill: Drill) -> dict[str, int]:
    """Recounted from the drill's log and its own knowledge of plans and mutes."""
    start, _, end = drill.settings.followup_hours.partition("-")
    found: Counter[str] = Counter()
    per_chat_day: Counter[tuple[str, date]] = Counter()
    last_to: dict[str, datetime] = {}
    for at, scope, text in drill.sends:
        plan = drill.plans[int(text.rsplit("#", 1)[1])]
        local_at = at.astimezone(SH)
        if not start <= f"{local_at:%H:%M}" < end:
            found["at_night"] += 1
        if scope == ON and (local_at.date() - START).days in MUTED_DAYS:
            found["in_muted_chat"] += 1
        if plan.ended_at is not None and at >= plan.ended_at:
            found["after_the_plan_ended"] += 1
        if scope == OFF:
            found["in_the_group_without"] += 1
        per_chat_day[(scope, local_at.date())] += 1
        if plan.person in last_to and at - last_to[plan.person] < timedelta(days=7):
            found["twice_a_week_to_one_person"] += 1
        last_to[plan.person] = at
    found["asked_twice_for_one_plan"] = sum(
        len(p.asked) - 1 for p in drill.plans.values() if len(p.asked) > 1
    )
    found["twice_a_day_in_one_chat"] = sum(n - 1 for n in per_chat_day.values() if n > 1)
    found["passed_over"] = drill.passed_over
    found["woken_offered_nothing"] = drill.woken_offered_nothing
    keys = (
        "at_night",
        "in_muted_chat",
        "after_the_plan_ended",
        "asked_twice_for_one_plan",
        "twice_a_day_in_one_chat",
        "twice_a_week_to_one_person",
        "in_the_group_without",
        "passed_over",
        "woken_offered_nothing",
    )
    return {k: found[k] for k in keys}


class Told(Protocol):
    """A plan as a drill logged it (this one's and the peer drill's)."""

    scope: str
    day: date
    ended_at: datetime | None
    asked: list[tuple[datetime, str]]
    offered_days: set[date]
    crowded: int


def outcomes(
    plans: Iterable[Told], last_day: date, window_days: int, without: str
) -> dict[str, Any]:
    """What became of every follow-up that came due, by a drill's own log (`without`:
    the group without follow-ups)."""
    became_due = [
        p
        for p in plans
        if p.day + timedelta(days=1) <= last_day
        and (p.ended_at is None or p.ended_at > local(p.day + timedelta(days=1), 0))
    ]
    result: Counter[str] = Counter()
    by_chat: Counter[str] = Counter()
    for plan in became_due:
        if plan.asked:
            result[f"asked {plan.asked[0][1]}"] += 1
            by_chat[f"{plan.scope} {plan.asked[0][1]}"] += 1
        elif 1 <= (last_day - plan.day).days <= window_days:
            result["still due at the end"] += 1
        elif plan.offered_days:
            result["offered, never cited by the reply"] += 1
        elif plan.crowded:
            result["expired, another was asked each time it could have been"] += 1
        elif plan.scope == without:
            result["expired in the group without, its person never woke the persona"] += 1
        else:
            result["expired, held by the caps, a mute or quiet, and never woken"] += 1
    return {
        "followups_became_due": len(became_due),
        "outcomes": dict(sorted(result.items())),
        "asked_by_chat": dict(sorted(by_chat.items())),
    }


async def run(days: int, seed: int, folder: Path) -> dict[str, Any]:
    settings = Settings(data_dir=folder, timezone="Asia/Shanghai")
    clock = FakeClock(local(START, 0))
    core = await Yuji.open(settings, clock=clock, embedder=FakeEmbedder())
    guard = OutOfCharacterGuard(settings.ooc_patterns)

    def writes(request: Any) -> Any:
        system = str(request.messages[0].content or "")
        plan = system.split("说过「", 1)[1].split("」", 1)[0]
        return text_response(f"{plan}怎么样啦？")

    llm = ScriptedLLM(default=writes)
    job = Unprompted(
        core.followups,
        llm,
        ok=lambda text: guard.check(text).ok,
        persona=lambda: "你是大肥鱼。",
        is_muted=core.chat_commands.is_muted,
        recent=core.archive.recent,
    )
    drill = Drill(core, clock, random.Random(seed), settings)
    await core.followups.repo.set_chat(ON, True, "admin", at=clock.now())
    try:
        for index in range(days):
            await day_of(drill, job, START + timedelta(days=index), index)
        listing = await core.followups.listing(None, clock.now())
    finally:
        await core.close()
    last_day = START + timedelta(days=days - 1)
    return {
        "days": days,
        "plans_told": len(drill.plans),
        "plans_ended_early": sum(1 for p in drill.plans.values() if p.ended_at is not None),
        **outcomes(drill.plans.values(), last_day, drill.window_days, OFF),
        "states_at_the_end": dict(sorted(Counter(f.state for f in listing).items())),
        "violations": violations(drill),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="the follow-ups drill: a month on a fake clock")
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        result = asyncio.run(run(args.days, args.seed, Path(folder)))
    show(result, as_json=args.json)


def show(result: dict[str, Any], *, as_json: bool) -> None:
    """A drill's result as JSON, or a line per count."""
    if as_json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return
    for key, value in result.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
