"""The nightly pipeline end to end: a day of archived chat, consolidated into a
fragment by `yuji consolidate`, then `yuji nightly --day D` in a subprocess against
the loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from memory_core import Settings, Yuji
from memory_core.nightly.days import last_complete_day, parse_cutoff
from memory_core.storage.schema import fragments
from memory_core.types import NewExperience
from tests.core.nightly.seed import prompt_kind
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

pytestmark = pytest.mark.e2e
__all__ = ["openai_server"]

SCOPE = "group:100"
SHANGHAI = ZoneInfo("Asia/Shanghai")
CHAT = [
    ("南杉", "我出差回来啦，杭州好冷"),
    ("小白", "欢迎回来！周六要不要去爬山"),
    ("南杉", "好呀，周六早上八点西湖边见"),
    ("小白", "对了我最近改吃辣了，爬完去吃川菜吧"),
] * 4


def the_day() -> date:
    """A day that has certainly ended (the day before the last complete one)."""
    return last_complete_day(datetime.now(UTC), SHANGHAI, parse_cutoff("04:00")) - timedelta(days=1)


async def archive_day(data_dir: Path, day: date) -> list[int]:
    core = await Yuji.open(Settings(data_dir=data_dir))
    try:
        start = datetime(day.year, day.month, day.day, 20, 0, tzinfo=SHANGHAI)
        ids = await core.archive.append_many(
            [
                NewExperience(
                    scope=SCOPE,
                    fingerprint=f"m{i}",
                    sender_id="1" if name == "南杉" else "2",
                    sender_name=name,
                    text=text,
                    sent_at=(start + timedelta(minutes=i)).astimezone(UTC),
                )
                for i, (name, text) in enumerate(CHAT)
            ]
        )
        await core.archive.flush()
        return ids
    finally:
        await core.close()


def model(body: dict[str, Any]) -> Reply:
    """Consolidation (tool calls) and each nightly prompt, answered by kind."""
    messages = body["messages"]
    if body.get("tools"):
        token = str(messages[1]["content"]).split("token：", 1)[1].split("\n", 1)[0]
        summary = "南杉出差回来，和小白约好周六早上八点在西湖边见面去爬山；小白最近改吃辣了。"
        return Reply.tool(
            "acknowledge", {"token": token, "outcome": "extracted", "summary": summary}
        )
    kind = prompt_kind(str(messages[0]["content"]))
    user = str(messages[1]["content"])
    ids = [int(i) for i in re.findall(r"\[碎片 (\d+)\]", user)]
    payload: dict[str, Any] = {
        "diary": {
            "diary": "南杉出差回来，小白约她周六早上八点在西湖边见面爬山，小白说最近改吃辣了。"
        },
        "cards": {
            "changes": [
                {"kind": "preferences", "action": "add", "text": "小白最近改吃辣了"},
                {"kind": "goals", "action": "add", "text": "周六一起去西湖边爬山"},
            ],
            "timeline": "第一次约好一起爬山",
        },
        "states": {"changes": []},
        "events": {
            "events": [
                {
                    "subject": "小白",
                    "content": "小白约南杉周六早上八点在西湖边见面去爬山",
                    "importance": 0.7,
                    "fragment_ids": ids,
                }
            ]
        },
        "settle": {"rewrites": []},
        "followups": {"drop": []},
    }[kind]
    return Reply.text(json.dumps(payload, ensure_ascii=False))


async def cli(data_dir: Path, server: FakeOpenAIServer, *argv: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("YUJI_")}
    env.update(server.env())
    env["YUJI_DATA_DIR"] = str(data_dir)
    proc = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "memory_core.cli", *argv],
        cwd=data_dir.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr


async def test_yuji_nightly_turns_a_day_of_archived_chat_into_diary_cards_and_events(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    data_dir = tmp_path / "data"
    day = the_day()
    ids = await archive_day(data_dir, day)
    openai_server.handler = model

    code, out = await cli(data_dir, openai_server, "consolidate", "--once", "--force")
    assert code == 0, out
    code, out = await cli(data_dir, openai_server, "nightly", "--day", day.isoformat())
    assert code == 0, out

    lines = out.splitlines()
    for step, outcome in [
        ("结算", "跳过"),
        ("小传", "完成"),
        ("卡片", "完成"),
        ("状态", "完成"),
        ("事件", "完成"),
        ("回收", "跳过"),
    ]:
        assert any(line.startswith(f"{SCOPE} {day} {step} {outcome}") for line in lines), out
    nightly_requests = [r for r in openai_server.requests if not r.body.get("tools")]
    assert len(nightly_requests) == 4
    diary_prompt = nightly_requests[0].prompt_text
    assert "和小白约好周六早上八点在西湖边见面" in diary_prompt
    assert f"日期：{day}" in diary_prompt

    core = await Yuji.open(Settings(data_dir=data_dir))
    try:
        diary = await core.nightly.diary(SCOPE, day.isoformat())
        assert diary is not None
        assert "西湖边见面爬山" in diary.content
        async with core.db.read() as conn:
            rows = (await conn.execute(select(fragments))).mappings().all()
        assert [(r["id"], r["archived"]) for r in rows] == [(diary.fragment_ids[0], True)]
        assert (rows[0]["first_id"], rows[0]["last_id"]) == (ids[0], ids[-1])
        cards = {c.kind: c.content for c in await core.nightly.cards(SCOPE)}
        assert cards == {"preferences": "小白最近改吃辣了", "goals": "周六一起去西湖边爬山"}
        [event] = await core.memories.newest(SCOPE, types=["event"])
        assert event.content == "小白约南杉周六早上八点在西湖边见面去爬山"
        refs = await core.memories.evidence(SCOPE, event.id)
        assert [r.fragment_id for r in refs] == list(diary.fragment_ids)
        blocks = await core.nightly.blocks(SCOPE, datetime.now(UTC), [])
        assert blocks.timeline == (f"{day}：第一次约好一起爬山",)
        assert blocks.recent_diaries == ((day.isoformat(), diary.content),)
    finally:
        await core.close()

    # Run again: every step is kept, nothing is asked twice.
    asked = len(openai_server.requests)
    code, out = await cli(data_dir, openai_server, "nightly", "--day", day.isoformat())
    assert code == 0, out
    assert out.count(" 早已完成：") == 8
    assert len(openai_server.requests) == asked
    code, out = await cli(data_dir, openai_server, "nightly", "--status", "--scope", SCOPE)
    assert code == 0, out
    assert f"{SCOPE} {day} 结算=完成 小传=完成 卡片=完成" in out


async def test_yuji_nightly_refuses_a_day_that_has_not_ended(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    future = (datetime.now(UTC) + timedelta(days=2)).date().isoformat()
    code, out = await cli(tmp_path / "data", openai_server, "nightly", "--day", future)
    assert code == 1
    assert out.startswith("拒绝：")
    assert "has not ended yet" in out
    assert openai_server.requests == []
