"""Issue 44's drill on a fake clock, end to end: the real bot runs under libfaketime
(tests/e2e/faketime.py), whose wall clock the test moves; the OneBot peer and the fake
model are the real ones of tests/e2e/test_followups_e2e.py.

On Monday 2027-03-01, 阿哲 tells the persona in a private chat "我下周二考四级". The
fake model consolidates it as a model would from the batch line's date and weekday
(`2027-03-01 周一`): an event on Tuesday 2027-03-09. With the default hours
(YUJI_FOLLOWUP_HOURS 10:00-21:30) the follow-up job, every 2 s of the bot's clock:

- sends nothing on Wednesday 2027-03-10 at 00:30 (night) or at 09:50;
- at 10:00 sends one plain `send_private_msg` (no reply target) to 阿哲, archived as
  the bot's own message at that time;
- sends nothing more that afternoon, nor on Thursday.

Each "nothing" waits for two runs of the job that began on the bot's clock at or after
the time set (APScheduler's "executed successfully" lines name the job's next run).
Monday's chat is consolidated before the clock moves on. The nightly run fires as the
clock passes 04:00 (catching up the days it missed); the fake model answers its prompts
with quiet days, dropping no follow-up.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.core.nightly.seed import KIND_MARKS, quiet_day
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

from .faketime import FakeClock
from .harness import BotProcess, query, wait_until
from .test_chat_e2e import ENV
from .test_followups_e2e import text_of
from .test_nightly_e2e import cli

__all__ = ["openai_server"]

pytestmark = pytest.mark.e2e

SH = ZoneInfo("Asia/Shanghai")
ZHE = 20001
SCOPE = f"private:{ZHE}"
MONDAY = datetime(2027, 3, 1, 20, 0, tzinfo=SH)
EXAM = date(2027, 3, 9)
"""下周二, said on Monday 2027-03-01."""
WEDNESDAY = datetime(2027, 3, 10, tzinfo=SH)
ASK = "阿哲，四级考得怎么样呀？"
CHECK_S = 2
NIGHTLY = "在深夜替它整理当天的记忆"
"""What every nightly prompt's system message says (the chat prompt names cards too)."""
WEEKDAYS = "一二三四五六日"
PLAN_LINE = re.compile(
    r"^#(\d+) \[(\d{4}-\d{2}-\d{2}) 周(.) [^\]]*\] ([^(\n]+)\((\d+)\)：我下周(.)(\S+)$", re.M
)
JOB_RUN = re.compile(
    rf'Job "tick \(trigger: interval\[0:00:0{CHECK_S}\], next run at: '
    r'(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) CST\)" executed successfully'
)
"""The follow-up job's runs (APScheduler's timezone is Asia/Shanghai); the consolidation
job, also `tick`, runs every second."""


def next_week(said_on: date, weekday: str, target: str) -> date:
    """ "下周X" read from a batch line's date and weekday: day X of the week after the
    one it was said in (a week starts on Monday)."""
    monday = said_on - timedelta(days=WEEKDAYS.index(weekday))
    return monday + timedelta(weeks=1, days=WEEKDAYS.index(target))


def model(body: dict[str, Any]) -> Reply:
    """Consolidation writes each "我下周X…" line as its sender's event on that day; the
    unprompted follow-up gets ASK; the nightly prompts get quiet days (keeping every
    follow-up); a chat reply gets a plain answer."""
    messages = body.get("messages", [])
    first = str(messages[0].get("content") or "") if messages else ""
    if not body.get("tools"):
        if "你想问问怎么样了" in first:
            return Reply.text(ASK)
        if NIGHTLY in first:
            kind = next(k for k, mark in KIND_MARKS.items() if mark in first)
            return Reply.text(json.dumps(quiet_day(kind), ensure_ascii=False))
        return Reply.text("好的，加油")
    user = str(messages[1].get("content") or "")
    token = re.search(r"token：(\S+)", user)
    if token is None or any(m.get("role") == "tool" for m in messages):
        return Reply.text("整理完了")
    calls: list[tuple[str, dict[str, Any]]] = []
    for line in PLAN_LINE.finditer(user):
        number, said_on, weekday, name, uid, target, what = line.groups()
        day = next_week(date.fromisoformat(said_on), weekday, target)
        calls.append(
            (
                "write_memory",
                {
                    "token": token.group(1),
                    "type": "event",
                    "subject": name,
                    "subject_id": uid,
                    "content": f"{name}{day.month}月{day.day}日{what}",
                    "evidence": [int(number)],
                    "valid_from": day.isoformat(),
                },
            )
        )
    outcome = {"token": token.group(1), "outcome": "extracted", "summary": "计划"}
    if not calls:
        outcome = {"token": token.group(1), "outcome": "nothing"}
    return Reply.tools(*calls, ("acknowledge", outcome))


def utc(text: str) -> datetime:
    """A UTCDateTime column as SQLite holds it (naive UTC)."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def local(text: str) -> datetime:
    return utc(text).astimezone(SH)


def consolidated(database: Path) -> bool:
    """Every message of the chat read by consolidation (its cursor acknowledged)."""
    rows = query(
        database,
        "SELECT c.acked_id >= (SELECT max(id) FROM experiences WHERE scope = c.scope)"
        " FROM consolidation_cursors c WHERE c.scope = ?",
        (SCOPE,),
    )
    return rows == [(1,)]


async def listed(
    data_dir: Path, server: FakeOpenAIServer, at: datetime
) -> list[tuple[str, str, list[str]]]:
    """(state, date, window) of the chat's follow-ups at `at`, as `yuji followups` says
    (the operator's command, beside the running bot)."""
    code, out = await cli(
        data_dir, server, "followups", "--scope", SCOPE, "--at", at.isoformat(), "--json"
    )
    assert code == 0, out
    return [(f["state"], f["date"], f["window"]) for f in json.loads(out)]


async def job_ran_after(bot: BotProcess, instant: datetime) -> None:
    """Two runs of the follow-up job began on the bot's clock at or after `instant`: a
    run logged with its next run at X was started in [X - CHECK_S, X); the second of
    two such runs started after the first ended (one instance at a time)."""
    since = instant.astimezone(SH).replace(tzinfo=None) + timedelta(seconds=CHECK_S)

    def runs() -> bool:
        found = [datetime.fromisoformat(m) for m in JOB_RUN.findall(bot.log_text())]
        return len([at for at in found if at >= since]) >= 2

    await wait_until(runs, timeout_s=60)


async def test_a_plan_told_on_monday_is_asked_once_on_the_wednesday_after_at_ten(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    openai_server.handler = model
    clock = FakeClock(tmp_path, MONDAY)
    bot = BotProcess(
        tmp_path,
        env={
            **ENV,
            **openai_server.env(),
            **clock.env(),
            "YUJI_CONSOLIDATION_TICK_S": "1",
            "YUJI_ELIGIBLE_MAX_WAIT_S": "1",
            "YUJI_FOLLOWUP_CHECK_S": str(CHECK_S),
            "APSCHEDULER_LOG_LEVEL": "20",
        },
    )
    await bot.start()
    try:
        async with bot.peer() as peer:

            def asks() -> list[Any]:
                return [c for c in peer.calls if text_of(c) == ASK]

            # Monday evening: the plan, said at the bot's Monday; the persona answers.
            said = clock.now()
            await peer.send_event(
                peer.private_message(
                    "我下周二考四级",
                    user_id=ZHE,
                    message_id=61_001,
                    nickname="阿哲",
                    time_=int(said.timestamp()),
                )
            )
            await peer.wait_for_call("send_msg", lambda c: c.params.get("user_id") == ZHE)
            [(valid_from,)] = await wait_until(
                lambda: query(
                    bot.database,
                    "SELECT valid_from FROM memories WHERE scope = ? AND type = 'event'",
                    (SCOPE,),
                )
            )
            assert local(valid_from) == datetime(EXAM.year, EXAM.month, EXAM.day, tzinfo=SH)
            # The bot's clock follows the file: its reply is archived on Monday evening.
            [(replied,)] = query(
                bot.database,
                "SELECT sent_at FROM experiences WHERE scope = ? AND is_bot = 1",
                (SCOPE,),
            )
            assert MONDAY <= local(replied) < MONDAY + timedelta(minutes=10)
            # The consolidation batch dated the line on Monday.
            batch = next(r.prompt_text for r in openai_server.requests if r.body.get("tools"))
            assert "2027-03-01 周一" in batch
            # Monday's chat is all consolidated before the days go by.
            await wait_until(lambda: consolidated(bot.database))

            # Wednesday, in the night and before ten: due, but not asked.
            for at in (WEDNESDAY.replace(hour=0, minute=30), WEDNESDAY.replace(hour=9, minute=50)):
                clock.set(at)
                await job_ran_after(bot, at)
                assert asks() == []
            assert await listed(bot.data_dir, openai_server, clock.now()) == [
                ("due", EXAM.isoformat(), ["2027-03-10", "2027-03-12"])
            ]

            # Ten o'clock: asked once, plainly, and archived as the bot's own message.
            ten = WEDNESDAY.replace(hour=10)
            clock.set(ten)
            [asked] = await wait_until(asks, timeout_s=60)
            assert asked.action == "send_private_msg"
            assert asked.params.get("user_id") == ZHE
            assert "reply" not in json.dumps(asked.params.get("message"))  # no reply target
            [(is_bot, sent_at)] = await wait_until(
                lambda: query(
                    bot.database,
                    "SELECT is_bot, sent_at FROM experiences WHERE scope = ? AND text = ?",
                    (SCOPE, ASK),
                )
            )
            assert is_bot == 1
            assert ten <= local(sent_at) < ten + timedelta(minutes=5)
            [(state, asked_at, sent_text)] = await wait_until(
                lambda: query(
                    bot.database,
                    "SELECT state, asked_at, sent_text FROM followups WHERE scope = ?",
                    (SCOPE,),
                )
            )
            assert (state, sent_text) == ("asked", ASK)
            assert ten <= local(asked_at) < ten + timedelta(minutes=5)

            # Later that day, and the next day: never a second time.
            for at in (WEDNESDAY.replace(hour=15), WEDNESDAY + timedelta(days=1, hours=10)):
                clock.set(at)
                await job_ran_after(bot, at)
            assert len(asks()) == 1
    finally:
        pid = bot.pid
        await bot.stop()
        FakeClock.cleanup(pid)
