"""The console's follow-ups page (#44): a chat's follow-ups in every state, whose, the
day and window, and what was sent unprompted, as text; another chat's are not there."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import nonebot
import pytest
from fastapi import FastAPI

from memory_core import EvidenceRef, NewExperience, Settings, Yuji

TOKEN = "test-console-token-followups-44"
A, B = "group:400", "group:401"


@pytest.fixture
def yuji_settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "yuji-data", console_token=TOKEN)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = nonebot.get_app()
    assert isinstance(app, FastAPI)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.9", 5000))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://yuji.test", headers=headers
    ) as c:
        yield c


async def plan(core: Yuji, scope: str, who: str, text: str, content: str, day: datetime) -> int:
    said = await core.archive.append(
        NewExperience(
            scope,
            f"{scope}-{text}",
            who,
            text,
            sender_name="阿哲",
            sent_at=core.clock.now() - timedelta(days=5),
        )
    )
    written = await core.memories.write(
        scope,
        type="event",
        subject="阿哲",
        content=content,
        evidence=[EvidenceRef(experience_id=said)],
        valid_from=day,
        subject_id=who,
    )
    return written.memory.id


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


async def test_the_page_lists_each_state_and_what_was_sent(
    client: httpx.AsyncClient, yuji_core: Yuji
) -> None:
    # The plugin tests' clock: 2026-11-20 20:00 in Shanghai.
    exam = await plan(
        yuji_core,
        A,
        "7",
        "我11月18号考四级",
        "阿哲11月18日考四级",
        datetime(2026, 11, 17, 16, tzinfo=UTC),
    )
    later = await plan(
        yuji_core,
        A,
        "7",
        "我11月29号搬家",
        "阿哲11月29日搬家",
        datetime(2026, 11, 28, 16, tzinfo=UTC),
    )
    other = await plan(
        yuji_core,
        B,
        "7",
        "我11月18号面试",
        "阿哲11月18日面试",
        datetime(2026, 11, 17, 16, tzinfo=UTC),
    )
    await yuji_core.followups.mark_asked(A, exam, sent_text="阿哲，四级考得怎么样？")
    response = await client.get(f"/yuji/chats/{A}/followups")
    assert response.status_code == 200
    page = text_of(response.text)
    assert f"#{exam} 阿哲 7 阿哲11月18日考四级 2026-11-18 2026-11-19 ～ 2026-11-21 问过了" in page
    assert "阿哲，四级考得怎么样？" in page
    assert f"#{later} 阿哲 7 阿哲11月29日搬家 2026-11-29 2026-11-30 ～ 2026-12-02 还没到" in page
    assert f"#{other}" not in page
    assert "这里不会主动问" in page
    empty = await client.get("/yuji/chats/group:402/followups")
    assert "这个聊天里还没有要跟进的计划" in text_of(empty.text)
