"""The drill's side of benchmarks/followups_peer/run.py: what members say and when, the
follow-up job's looks, and the log every count is recounted from."""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from memory_core.followups.due import MAX_OFFERS
from tests.e2e.faketime import FakeClock
from tests.e2e.harness import BotProcess, OnebotPeer, query, wait_until

from .model import ASKED, FakeModel, content

SH = ZoneInfo("Asia/Shanghai")
START = date(2027, 3, 1)
"""A Monday."""
ZHE, ON_GROUP, OFF_GROUP, ADMIN = 20001, 7401, 7402, 20009
PRIVATE, ON, OFF = f"private:{ZHE}", f"group:{ON_GROUP}", f"group:{OFF_GROUP}"
MEMBERS = {
    PRIVATE: {ZHE: "阿哲"},
    ON: {20002: "小周", 20003: "阿梅", 20004: "老王"},
    OFF: {20005: "小林", 20006: "大刘", 20007: "阿珍"},
}
THINGS = ("考四级", "面试", "体检", "搬家", "去医院复查", "考驾照", "出差回来", "看演唱会")
CHECK_S = 1
HOURS = ("10:00", "21:30")
WINDOW_DAYS = 3
QUIET = timedelta(seconds=600)
WEEK = timedelta(days=7)
MUTE_DAY, MUTE_DAYS = 4, 3
LOOKS = (2 * 60, *range(9 * 60, 23 * 60, 60))
"""The job's looks the drill waits for, in minutes of a local day."""
ENV = {
    "YUJI_CONSOLIDATION_TICK_S": "2",
    "YUJI_ELIGIBLE_MAX_WAIT_S": "1",
    "YUJI_BACKFILL_INTERVAL_S": "0",
    "YUJI_FOLLOWUP_CHECK_S": str(CHECK_S),
    "YUJI_TIMEZONE": "Asia/Shanghai",
    "APSCHEDULER_LOG_LEVEL": "20",
}
JOB = rf'"tick \(trigger: interval\[0:00:0{CHECK_S}\], next run at: [^)]*\)"'
"""The follow-up job in APScheduler's lines (consolidation's `tick` runs every 2 s)."""
RUNNING = re.compile(rf"Running job {JOB}")
DONE = re.compile(rf"Job {JOB} executed successfully")
CHAT = "Matcher(type='message', module=nonebot_plugin_yuji.chat,"
"""The persona's reply matcher in NoneBot's lines (`Event will be handled by`, then
`running complete`)."""


def local(day: date, second: int) -> datetime:
    return datetime.combine(day, time(0), tzinfo=SH) + timedelta(seconds=second)


def in_hours(at: datetime) -> bool:
    return HOURS[0] <= f"{at.astimezone(SH):%H:%M}" < HOURS[1]


@dataclass
class Plan:
    scope: str
    person: int
    content: str
    day: date
    told_on: date
    memory_id: int | None = None
    ended_at: datetime | None = None
    ended_how: str = ""
    """cancelled, moved, forgotten; `carried`: whether the bot's memory changed too."""
    carried: bool = True
    offered_days: set[date] = field(default_factory=set[date])
    asked: list[tuple[datetime, str]] = field(default_factory=list[tuple[datetime, str]])
    crowded: int = 0

    def due_on(self, today: date) -> bool:
        return 1 <= (today - self.day).days <= WINDOW_DAYS

    def open_at(self, at: datetime) -> bool:
        ended = self.ended_at is not None and self.ended_at <= at
        return self.due_on(at.astimezone(SH).date()) and not ended and not self.asked


@dataclass
class Drill:
    bot: BotProcess
    peer: OnebotPeer
    clock: FakeClock
    model: FakeModel
    rng: random.Random
    plans: dict[str, Plan] = field(default_factory=dict[str, Plan])
    spoken: list[tuple[datetime, str]] = field(default_factory=list[tuple[datetime, str]])
    sends: list[tuple[datetime, str, str]] = field(default_factory=list[tuple[datetime, str, str]])
    on_since: datetime | None = None
    muted: tuple[datetime, datetime] | None = None
    counts: Counter[str] = field(default_factory=Counter[str])
    next_id: int = 60_000
    _log_at: int = 0
    _runs: list[tuple[datetime, bool]] = field(default_factory=list[tuple[datetime, bool]])
    _handling: int = 0
    _command: bool = False
    """The last message sent was a command (its answer is not a reply to a wake)."""

    # --- the peer ------------------------------------------------------------------

    def answer(self, action: str, params: dict[str, Any]) -> Any:
        """The peer's handler: every plain send of a follow-up line is logged."""
        muted_reply = action == "send_msg" and str(params.get("group_id")) == ON.split(":")[1]
        if muted_reply and self.is_muted(self.clock.now()) and not self._command:
            self.counts["replied_in_the_muted_group"] += 1  # a reply to anything but a command
        if action in ("send_group_msg", "send_private_msg"):
            message = params.get("message")
            segments = message if isinstance(message, list) else []
            text = "".join(str(s.get("data", {}).get("text", "")) for s in segments)
            if isinstance(message, str):
                text = message
            asked = ASKED.match(text)
            if asked is None:
                self.counts["other_plain_sends"] += 1
            else:
                kind = "group" if action == "send_group_msg" else "private"
                chat = params.get("group_id") if kind == "group" else params.get("user_id")
                self.followup(f"{kind}:{chat}", asked.group(1), segments)
        return self.peer.default_handler(action, params)

    def followup(self, scope: str, plan_text: str, segments: list[Any]) -> None:
        at = self.clock.now()
        self.sends.append((at, scope, plan_text))
        self.counts["with_a_reply_target"] += any(s.get("type") == "reply" for s in segments)
        plan = self.plans.get(plan_text)
        if plan is None:
            self.counts["about_no_plan_told"] += 1
            return
        plan.asked.append((at, "unprompted"))

    def move(self, at: datetime) -> datetime:
        """The bot's clock to `at` (never back: a slow wait may have run past it)."""
        at = max(at, self.clock.now())
        self.clock.set(at)
        return at

    async def say(self, scope: str, person: int, text: str, *, wake: bool = False) -> bool:
        """One message at the bot's now (a wake with `wake`, or any in the private chat;
        a command is answered too); True when the persona answered it."""
        self.next_id += 1
        self._command = text.startswith("/")
        now = self.clock.now().replace(microsecond=0)
        self.spoken.append((now, scope))
        start, replies = len(self.peer.calls), self.model.replies
        name = MEMBERS.get(scope, {}).get(person, "群主")
        if scope == PRIVATE:
            event = self.peer.private_message(
                text,
                user_id=person,
                message_id=self.next_id,
                nickname=name,
                time_=int(now.timestamp()),
            )
        else:
            event = self.peer.group_message(
                text,
                group_id=int(scope.split(":")[1]),
                message_id=self.next_id,
                user_id=person,
                nickname=name,
                role="admin" if person == ADMIN else "member",
                at_bot=wake and not text.startswith("/"),
                time_=int(now.timestamp()),
            )
        await self.peer.send_event(event)
        if not (wake or text.startswith("/") or scope == PRIVATE):
            return False
        if scope == ON and self.is_muted(now) and not text.startswith("/"):
            await self.handled()  # a reply would be counted by `answer`
            return False
        try:
            await wait_until(lambda: self.replied(scope, start), timeout_s=60)
        except TimeoutError:
            self.counts["wakes_unanswered"] += 1
            return False
        await self.handled()
        if not text.startswith("/"):
            self.offered(scope, person, now, replies)
        return True

    def replied(self, scope: str, start: int) -> bool:
        kind, _, chat = scope.partition(":")
        key = "group_id" if kind == "group" else "user_id"
        return any(
            c.action == "send_msg" and str(c.params.get(key)) == chat
            for c in self.peer.calls[start:]
        )

    def offered(self, scope: str, person: int, now: datetime, replies: int) -> None:
        """What the wake's reply prompt carried, against what the drill knows was due."""
        today = now.astimezone(SH).date()
        mine = [
            p
            for p in self.plans.values()
            if p.scope == scope and p.person == person and p.open_at(now)
            if len(p.offered_days) < MAX_OFFERS or today in p.offered_days
        ]
        self.counts["wakes_with_one_due"] += bool(mine)
        carried = [(m, t) for n, m, t in list(self.model.offers) if n > replies]
        if not carried:
            self.counts["woken_offered_nothing"] += bool(mine)
            return
        for _, plan_text in carried[:1]:
            plan = self.plans.get(plan_text)
            if plan is None or plan.scope != scope or plan.person != person:
                self.counts["offered_someone_elses_or_unknown"] += 1
                continue
            for other in mine:
                other.crowded += other is not plan
            plan.offered_days.add(today)
            plan.asked.append((now, "in passing"))

    def is_muted(self, at: datetime) -> bool:
        return self.muted is not None and self.muted[0] <= at < self.muted[1]

    # --- the job's looks ------------------------------------------------------------

    def sendable(self, scope: str, at: datetime) -> list[Plan]:
        """The plans the rules allow sending in `scope` at `at`, by the drill's log."""
        if scope == OFF or not in_hours(at):
            return []
        if scope == ON and (self.on_since is None or at < self.on_since or self.is_muted(at)):
            return []
        if any(s == scope and at - QUIET < t <= at for t, s in self.spoken):
            return []
        today = at.astimezone(SH).date()
        if any(s == scope and t.astimezone(SH).date() == today for t, s, _ in self.sends):
            return []
        week = {self.plans[p].person for t, _, p in self.sends if p in self.plans and at - t < WEEK}
        return [
            p
            for p in self.plans.values()
            if p.scope == scope and p.person not in week and p.open_at(at)
        ]

    async def look(self, at: datetime) -> None:
        at = self.move(at)
        could = {scope: self.sendable(scope, at) for scope in (PRIVATE, ON)}
        due = {
            scope
            for scope in MEMBERS
            if any(p.scope == scope and p.open_at(at) for p in self.plans.values())
        }
        self.counts["night_looks_with_one_due"] += not in_hours(at) and bool(due - {OFF})
        self.counts["muted_looks_with_one_due"] += self.is_muted(at) and in_hours(at) and ON in due
        self.counts["looks_with_one_due_in_the_group_without"] += in_hours(at) and OFF in due
        before = len(self.sends)
        await self.job_ran_after(at)
        sent_in = {scope for _, scope, _ in self.sends[before:]}
        for scope, plans in could.items():
            for plan in plans:
                plan.crowded += scope in sent_in and not plan.asked
            self.counts["passed_over"] += bool(plans) and scope not in sent_in
            self.counts["looks_allowing_a_send"] += bool(plans)

    async def job_ran_after(self, at: datetime) -> None:
        """A run of the follow-up job that began on the bot's clock at or after `at` has
        ended (one instance at a time: its `Running` line, then the next `executed`)."""
        since = at.astimezone(SH).replace(tzinfo=None)

        def ran() -> bool:
            self.read_log()
            return any(done and started >= since for started, done in self._runs)

        await wait_until(ran, timeout_s=90, interval=0.05)
        self._runs = self._runs[-1:]

    async def handled(self) -> None:
        """Every message the chat matcher took has been handled to the end (the reply's
        aftermath too: a cited follow-up is marked asked after the send)."""

        def done() -> bool:
            self.read_log()
            return self._handling == 0

        await wait_until(done, timeout_s=90, interval=0.05)

    def read_log(self) -> None:
        """The bot's log lines since the last read: the job's runs (by the line's own
        time, the bot's local clock) and the chat matcher's open handlings."""
        with self.bot.log_path.open("rb") as log:
            log.seek(self._log_at)
            chunk = log.read()
        cut = chunk.rfind(b"\n") + 1
        self._log_at += cut
        for line in chunk[:cut].decode("utf-8", "replace").splitlines():
            if RUNNING.search(line):
                stamp = datetime.fromisoformat(f"{START.year}-{line[:14]}+00:00")
                started = stamp.astimezone(SH).replace(tzinfo=None)
                self._runs.append((started, False))
            elif DONE.search(line) and self._runs:
                self._runs[-1] = (self._runs[-1][0], True)
            elif CHAT in line:
                self._handling += "Event will be handled" in line
                self._handling -= "running complete" in line

    # --- what members do --------------------------------------------------------------

    async def tell_plan(self, scope: str, person: int, today: date) -> None:
        name = MEMBERS[scope][person]
        for _ in range(20):
            day = today + timedelta(days=self.rng.randint(1, 8))
            thing = self.rng.choice(THINGS)
            if content(name, day.month, day.day, thing) not in self.plans:
                break
        else:
            return
        text = content(name, day.month, day.day, thing)
        self.plans[text] = Plan(scope, person, text, day, today)
        await self.say(scope, person, f"我{day.month}月{day.day}号{thing}")

    async def change(self, today: date) -> None:
        """Cancel, move or forget one plan still ahead, told on an earlier day (so
        consolidated: which plans may change does not hang on the bot's timing)."""
        ahead = [
            p
            for p in self.plans.values()
            if p.ended_at is None and p.told_on < today and p.day > today
            if self.memory_of(p) is not None
        ]
        if not ahead:
            return
        plan = self.rng.choice(ahead)
        how = self.rng.choice(("cancelled", "moved", "forgotten"))
        thing = plan.content.split("日", 1)[1]
        said = f"我{plan.day.month}月{plan.day.day}号的{thing}"
        plan.ended_at, plan.ended_how = self.clock.now().replace(microsecond=0), how
        self.counts[f"plans_{how}"] += 1
        if how == "cancelled":
            await self.say(plan.scope, plan.person, f"{said}取消了")
        elif how == "forgotten":
            admin = plan.person if plan.scope == PRIVATE else ADMIN
            await self.say(plan.scope, admin, f"/forget {plan.memory_id}")
        else:
            name = MEMBERS[plan.scope][plan.person]
            for _ in range(20):
                day = plan.day + timedelta(days=self.rng.randint(1, 3))
                if content(name, day.month, day.day, thing) not in self.plans:
                    break
            else:
                return
            new = content(name, day.month, day.day, thing)
            self.plans[new] = Plan(plan.scope, plan.person, new, day, today)
            await self.say(plan.scope, plan.person, f"{said}改到{day.month}月{day.day}号了")

    def memory_of(self, plan: Plan) -> int | None:
        if plan.memory_id is None:
            rows = query(
                self.bot.database,
                "SELECT id FROM memories WHERE scope = ? AND content = ? AND type = 'event'",
                (plan.scope, plan.content),
            )
            plan.memory_id = rows[0][0] if rows else None
        return plan.memory_id

    async def day(self, index: int) -> None:
        today = START + timedelta(days=index)
        timeline: list[tuple[int, str, str, int]] = [(m * 60, "look", "", 0) for m in LOOKS]
        if index == 0:
            timeline.append((7 * 3600 + 59 * 60, "/followups on", ON, ADMIN))
        if index == MUTE_DAY:
            timeline.append((7 * 3600 + 59 * 60 + 10, f"/mute {MUTE_DAYS}天", ON, ADMIN))
        for scope, members in MEMBERS.items():
            for person in members:
                for _ in range(self.rng.randint(0, 3)):
                    kind = self.rng.choices(("chat", "plan", "wake", "change"), (8, 4, 2, 0.8))[0]
                    timeline.append(
                        (self.rng.randint(8 * 60, 23 * 60 - 1) * 60 + 30, kind, scope, person)
                    )
        for second, kind, scope, person in sorted(timeline):
            at = local(today, second)
            if kind == "look":
                await self.look(at)
                continue
            at = self.move(at)
            if kind.startswith("/"):
                if kind.startswith("/followups"):
                    self.on_since = at
                else:
                    self.muted = (at, at + timedelta(days=MUTE_DAYS))
                await self.say(scope, person, kind)
            elif kind == "chat":
                await self.say(scope, person, "哈哈哈")
            elif kind == "plan":
                await self.tell_plan(scope, person, today)
            elif kind == "wake":
                await self.say(scope, person, "在吗", wake=True)
            else:
                await self.change(today)
        await wait_until(self.archived, timeout_s=60)
        await wait_until(self.consolidated, timeout_s=180)
        for plan in self.plans.values():
            self.memory_of(plan)
            if plan.ended_how in ("cancelled", "moved") and plan.memory_id is not None:
                plan.carried = self.model.changes.get(plan.content) is not None

    def archived(self) -> bool:
        """Every message the peer sent is in the archive (its writer commits shortly
        after a message arrives)."""
        rows = query(self.bot.database, "SELECT count(*) FROM experiences WHERE is_bot = 0")
        return rows == [(self.next_id - 60_000,)]

    def consolidated(self) -> bool:
        rows = query(
            self.bot.database,
            "SELECT count(*) FROM (SELECT scope, max(id) AS last FROM experiences GROUP BY scope) e"
            " LEFT JOIN consolidation_cursors c ON c.scope = e.scope"
            " WHERE coalesce(c.acked_id, 0) < e.last",
        )
        return rows == [(0,)]
