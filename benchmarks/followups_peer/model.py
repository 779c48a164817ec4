"""The fake model of the peer drill (benchmarks/followups_peer/run.py): what a model
reading the bot's prompts would answer, written from the prompts alone.

- Consolidation reads the batch's dated lines. "我M月D号<thing>" is its sender's event
  on that day ("只说了月日": the year of the line). "我M月D号的<thing>取消了" asks
  `search_memories` for the plan, then retracts the one it finds; "…改到M月D号了"
  searches, writes the new date and supersedes the old plan with it. What it found or
  not is kept in `changes` (the drill's log of what the model could do).
- The unprompted follow-up (its prompt names the plan in 「」) is "想起来<plan>，怎么样啦？".
- A reply whose prompt carries the follow-up block asks about it and cites its marker
  (`[[m:N]]`, as the block teaches); `offers` keeps what each reply prompt carried.
- The nightly prompts get quiet days (no follow-up dropped).

It is called from the fake server's threads: everything it keeps is behind a lock.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from memory_core.prompts.chat import FOLLOWUPS_HEADING, marker
from tests.core.nightly.seed import KIND_MARKS, quiet_day
from tests.fakes.openai_server import Reply

LINE = re.compile(r"^#(\d+) \[(\d{4})-\d{2}-\d{2} 周. [^\]]*\] ([^(\n]+)\((\d+)\)：(.+)$", re.M)
PLAN = re.compile(r"^我(\d+)月(\d+)号([^的\s]+)$")
CANCEL = re.compile(r"^我(\d+)月(\d+)号的(\S+?)取消了$")
MOVE = re.compile(r"^我(\d+)月(\d+)号的(\S+?)改到(\d+)月(\d+)号了$")
OFFER = re.compile(r"^#(\d+) [^：\n]+：(.+?)（\d{4}-\d{2}-\d{2}）——", re.M)
ASKED = re.compile(r"^想起来(.+)，怎么样啦？$")
CONSOLIDATION = "后台记忆整理员"
FOLLOWUP = "你想问问怎么样了"
NIGHTLY = "在深夜替它整理当天的记忆"


def followup_text(plan: str) -> str:
    return f"想起来{plan}，怎么样啦？"


def content(name: str, month: str | int, day: str | int, thing: str) -> str:
    """A plan as the model writes it: `阿梅3月12日面试`."""
    return f"{name}{int(month)}月{int(day)}日{thing}"


@dataclass
class FakeModel:
    changes: dict[str, int | None] = field(default_factory=dict[str, int | None])
    """A cancelled or moved plan's content -> the memory id the model's search found
    (None: not found, so nothing retracted or superseded)."""
    offers: list[tuple[int, int, str]] = field(default_factory=list[tuple[int, int, str]])
    """(reply number, memory id, plan) of every reply prompt carrying the block."""
    replies: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages: list[dict[str, Any]] = body.get("messages", [])
        first = str(messages[0].get("content") or "") if messages else ""
        if CONSOLIDATION in first:
            return self._consolidate(messages)
        if FOLLOWUP in first:
            return Reply.text(followup_text(first.split("说过「", 1)[1].split("」", 1)[0]))
        if NIGHTLY in first:
            kind = next(k for k, mark in KIND_MARKS.items() if mark in first)
            return Reply.text(json.dumps(quiet_day(kind), ensure_ascii=False))
        return self._reply("\n".join(str(m.get("content") or "") for m in messages))

    def _reply(self, prompt: str) -> Reply:
        block = prompt.split(f"## {FOLLOWUPS_HEADING}\n", 1)
        found = OFFER.search(block[1]) if len(block) == 2 else None
        with self._lock:
            self.replies += 1
            if found is None:
                return Reply.text("好的呀")
            memory_id, plan = int(found.group(1)), found.group(2)
            self.offers.append((self.replies, memory_id, plan))
        return Reply.text(f"对了，{plan}怎么样了？{marker(memory_id)}")

    def _consolidate(self, messages: list[dict[str, Any]]) -> Reply:
        user = str(messages[1].get("content") or "")
        token = re.search(r"token：(\S+)", user)
        if token is None:
            return Reply.text("整理完了")
        rounds = [m for m in messages if m.get("role") == "assistant"]
        lines = [(int(n), year, name, uid, text) for n, year, name, uid, text in LINE.findall(user)]
        t = token.group(1)
        if not rounds:
            return self._first(t, lines)
        results = _results(messages)
        if len(rounds) == 1:
            return self._second(t, lines, results)
        return _third(t, results)

    def _first(self, token: str, lines: list[tuple[int, str, str, str, str]]) -> Reply:
        calls: list[tuple[str, dict[str, Any]]] = []
        changes = 0
        for number, year, name, uid, text in lines:
            if plan := PLAN.match(text):
                month, day, thing = plan.groups()
                calls.append(_write(token, name, uid, number, year, month, day, thing))
            elif change := CANCEL.match(text) or MOVE.match(text):
                month, day, thing = change.groups()[:3]
                query = {"token": token, "query": content(name, month, day, thing), "limit": 20}
                calls.append(("search_memories", query))
                changes += 1
        if not changes:
            calls.append(_acknowledge(token, bool(calls)))
        return Reply.tools(*calls)

    def _second(
        self,
        token: str,
        lines: list[tuple[int, str, str, str, str]],
        results: list[list[tuple[str, dict[str, Any], dict[str, Any]]]],
    ) -> Reply:
        found = _found(results)
        calls: list[tuple[str, dict[str, Any]]] = []
        moving = False
        for number, year, name, uid, text in lines:
            if cancel := CANCEL.match(text):
                old = found.get(content(name, *cancel.groups()))
                if old is not None:
                    retract = {"token": token, "memory_id": old, "reason": "本人说取消了"}
                    calls.append(("retract_memory", retract))
            elif move := MOVE.match(text):
                month, day, thing, new_month, new_day = move.groups()
                # The new day is written whether or not the old plan was found.
                calls.append(_write(token, name, uid, number, year, new_month, new_day, thing))
                moving = moving or found.get(content(name, month, day, thing)) is not None
        with self._lock:
            self.changes.update(found)
        if not moving:
            calls.append(_acknowledge(token, True))
        return Reply.tools(*calls)


Results = list[list[tuple[str, dict[str, Any], dict[str, Any]]]]
"""Per round of the conversation: (tool, arguments, result) of each call."""


def _results(messages: list[dict[str, Any]]) -> Results:
    by_id: dict[str, dict[str, Any]] = {}
    for m in messages:
        if m.get("role") == "tool":
            by_id[str(m.get("tool_call_id"))] = json.loads(str(m.get("content") or "{}"))
    rounds: Results = []
    for m in messages:
        if m.get("role") != "assistant":
            continue
        rounds.append([])
        for call in m.get("tool_calls") or []:
            function = call["function"]
            args = json.loads(function.get("arguments") or "{}")
            rounds[-1].append((function["name"], args, by_id.get(str(call["id"]), {})))
    return rounds


def _found(results: Results) -> dict[str, int | None]:
    """The plan each search of the first round looked for -> the id of the memory with
    exactly that text among what it found (None: not found)."""
    found: dict[str, int | None] = {}
    for name, args, result in results[0]:
        if name == "search_memories":
            hits = [m["id"] for m in result.get("memories", []) if m["content"] == args["query"]]
            found[args["query"]] = hits[0] if hits else None
    return found


def _third(token: str, results: Results) -> Reply:
    """Each moved plan's old memory superseded by the one the second round wrote for its
    new day (the same person and thing)."""
    found = {plan: old for plan, old in _found(results).items() if old is not None}
    calls: list[tuple[str, dict[str, Any]]] = []
    for name, args, result in results[1]:
        if name != "write_memory" or "id" not in result:
            continue
        thing = args["content"].split("日", 1)[1]
        for plan, old in found.items():
            if plan.startswith(args["subject"]) and plan.endswith(f"日{thing}"):
                supersede = {"old_id": old, "new_id": result["id"], "reason": "本人说改期了"}
                calls.append(("supersede_memory", {"token": token, **supersede}))
    return Reply.tools(*calls, _acknowledge(token, True))


def _write(
    token: str, name: str, uid: str, number: int, year: str, month: str, day: str, thing: str
) -> tuple[str, dict[str, Any]]:
    return (
        "write_memory",
        {
            "token": token,
            "type": "event",
            "subject": name,
            "subject_id": uid,
            "content": content(name, month, day, thing),
            "evidence": [number],
            "valid_from": f"{year}-{int(month):02d}-{int(day):02d}",
        },
    )


def _acknowledge(token: str, extracted: bool) -> tuple[str, dict[str, Any]]:
    if extracted:
        return ("acknowledge", {"token": token, "outcome": "extracted", "summary": "计划"})
    return ("acknowledge", {"token": token, "outcome": "nothing"})
