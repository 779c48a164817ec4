"""Issue 44 end to end, through the real OneBot peer and the fake model: members tell
of their own dated plans ("我12月6号考四级", sent five days ago by the peer's clock);
the fake model consolidates each into an event dated that day, as a model reading the
batch's dated lines would. The plans' day was yesterday, so they are due today:

- in the private chat, the persona asks once, unprompted, through a plain
  `send_private_msg` (no reply target), archived as its own message;
- in a group without follow-ups on, nothing is sent, and that member's next wake there
  carries the plan in the reply prompt's follow-up block;
- in a group with follow-ups on but muted, nothing is sent;
- in a group whose admin `/forget`s the plan before turning follow-ups on, nothing.

The bot runs on the real clock, so its hours are opened to the whole day here; the
daytime rule, the caps and the quiet time run on a fake clock in
tests/core/followups/test_unprompted.py, and the daytime rule end to end, the bot on
libfaketime, in tests/e2e/test_followups_clock_e2e.py (Telegram's send:
tests/e2e/test_followups_telegram_e2e.py)."""

from __future__ import annotations

import re
import time
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from memory_core.prompts.chat import FOLLOWUPS_HEADING
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

from .harness import ApiCall, OnebotPeer, query, running_bot, wait_until
from .test_chat_e2e import ENV

__all__ = ["openai_server"]

pytestmark = pytest.mark.e2e

SH = ZoneInfo("Asia/Shanghai")
ZHE, ZHOU, MEI, LIN, ADMIN = 20001, 20002, 20003, 20004, 20009
OFF, MUTED, FORGOTTEN = 7301, 7302, 7303
ASK = "阿哲，考得怎么样呀？"
PLAN_LINE = re.compile(
    r"^#(\d+) \[(\d{4})-\d{2}-\d{2} 周. [^\]]*\] ([^(\n]+)\((\d+)\)：我(\d+)月(\d+)号(\S+)$", re.M
)


def model(body: dict[str, Any]) -> Reply:
    """Consolidation writes each "我M月D号…" line as its sender's event on that day;
    the unprompted follow-up gets ASK; a reply gets a plain answer."""
    messages = body.get("messages", [])
    first = str(messages[0].get("content") or "") if messages else ""
    if not body.get("tools"):
        return Reply.text(ASK if "你想问问怎么样了" in first else "在的")
    user = str(messages[1].get("content") or "")
    token = re.search(r"token：(\S+)", user)
    if token is None or any(m.get("role") == "tool" for m in messages):
        return Reply.text("整理完了")
    calls: list[tuple[str, dict[str, Any]]] = []
    for line in PLAN_LINE.finditer(user):
        number, year, name, uid, month, day, what = line.groups()
        calls.append(
            (
                "write_memory",
                {
                    "token": token.group(1),
                    "type": "event",
                    "subject": name,
                    "subject_id": uid,
                    "content": f"{name}{month}月{day}日{what}",
                    "evidence": [int(number)],
                    "valid_from": f"{year}-{int(month):02d}-{int(day):02d}",
                },
            )
        )
    outcome = {"token": token.group(1), "outcome": "extracted", "summary": "计划"}
    if not calls:
        outcome = {"token": token.group(1), "outcome": "nothing"}
    return Reply.tools(*calls, ("acknowledge", outcome))


class Chats:
    def __init__(self, peer: OnebotPeer) -> None:
        self.peer, self.next_id = peer, 60_000

    async def group(
        self, group: int, text: str, user: int, *, role: str = "member", wait: bool = False
    ) -> None:
        self.next_id += 1
        start = len(self.peer.calls)
        await self.peer.send_event(
            self.peer.group_message(
                text,
                group_id=group,
                message_id=self.next_id,
                user_id=user,
                role=role,
                nickname=f"群友{user}",
                at_bot=wait and not text.startswith("/"),
                time_=int(time.time()) - (5 * 86400 if text.startswith("我") else 0),
            )
        )
        if wait:
            await wait_until(lambda: [c for c in self.peer.calls[start:] if sent_to(c, group)])

    async def private(self, text: str, user: int) -> None:
        self.next_id += 1
        await self.peer.send_event(
            self.peer.private_message(
                text,
                user_id=user,
                message_id=self.next_id,
                nickname="阿哲",
                time_=int(time.time()) - 5 * 86400,
            )
        )


def sent_to(call: ApiCall, group: int) -> bool:
    return call.action in ("send_group_msg", "send_msg") and call.params.get("group_id") == group


def text_of(call: ApiCall) -> str:
    message = call.params.get("message")
    if isinstance(message, str):
        return message
    return "".join(str(s.get("data", {}).get("text", "")) for s in message or [])


def plan_day() -> date:
    return datetime.now(SH).date() - timedelta(days=1)


def memory_of(database: Path, scope: str) -> list[tuple[Any, ...]]:
    return query(database, "SELECT id FROM memories WHERE scope = ? AND type = 'event'", (scope,))


async def test_asked_once_where_allowed_in_passing_elsewhere_never_muted_or_forgotten(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    openai_server.handler = model
    day = plan_day()
    said = f"{day.month}月{day.day}号"
    env = {
        **ENV,
        **openai_server.env(),
        "YUJI_CONSOLIDATION_TICK_S": "1",
        "YUJI_ELIGIBLE_MAX_WAIT_S": "1",
        "YUJI_FOLLOWUP_CHECK_S": "1",
        "YUJI_FOLLOWUP_HOURS": "00:00-24:00",
        "YUJI_FOLLOWUP_QUIET_S": "0",
    }
    async with running_bot(tmp_path, env=env) as bot, bot.peer() as peer:
        chats = Chats(peer)
        # A group with follow-ups on, but muted.
        await chats.group(MUTED, "/followups on", ADMIN, role="admin", wait=True)
        await chats.group(MUTED, "/mute", ADMIN, role="admin", wait=True)
        await chats.group(MUTED, f"我{said}面试", MEI)
        # A group whose admin forgets the plan, then turns follow-ups on.
        await chats.group(FORGOTTEN, f"我{said}体检", LIN)
        [(forgotten,)] = await wait_until(lambda: memory_of(bot.database, f"group:{FORGOTTEN}"))
        await chats.group(FORGOTTEN, f"/forget {forgotten}", ADMIN, role="admin", wait=True)
        await chats.group(FORGOTTEN, "/followups on", ADMIN, role="admin", wait=True)
        # A group without follow-ups.
        await chats.group(OFF, f"我{said}考驾照", ZHOU)
        await wait_until(lambda: memory_of(bot.database, f"group:{OFF}"))
        await wait_until(lambda: memory_of(bot.database, f"group:{MUTED}"))
        # The private chat last: one pass of the job that asks here has seen the others.
        await chats.private(f"我{said}考四级", ZHE)
        asked = await wait_until(
            lambda: [c for c in peer.calls if c.action == "send_private_msg" and text_of(c) == ASK]
        )
        assert asked[0].params.get("user_id") == ZHE
        assert "reply" not in str(asked[0].params.get("message"))  # a plain send
        rows = await wait_until(
            lambda: query(
                bot.database,
                "SELECT is_bot FROM experiences WHERE scope = ? AND text = ?",
                (f"private:{ZHE}", ASK),
            )
        )
        assert rows == [(1,)]  # archived as the bot's own message
        states = query(bot.database, "SELECT scope, state, sent_text FROM followups")
        assert (f"private:{ZHE}", "asked", ASK) in states

        # In the group without follow-ups on, 小周's next wake carries his plan.
        before = len(openai_server.requests)
        await chats.group(OFF, "在吗", ZHOU, wait=True)
        replies = [r for r in openai_server.requests[before:] if not r.body.get("tools")]
        prompt = replies[0].prompt_text
        block = prompt.split(f"## {FOLLOWUPS_HEADING}\n", 1)[1].split("\n", 1)[0]
        assert f"{day.month}月{day.day}日考驾照" in block

        # Nowhere else was anything sent unprompted, and the private chat only once.
        unprompted = [c for c in peer.calls if text_of(c) == ASK]
        assert [c.params.get("user_id") for c in unprompted] == [ZHE]
        for group in (OFF, MUTED, FORGOTTEN):
            assert not [c for c in peer.calls if sent_to(c, group) and text_of(c) == ASK]
