"""The console's person page says what of a member's own words travels where (#45): their
choices, this chat's block, the memories of this chat that reach their other chats and
the words from their other groups a wake about them here would get; as text."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import nonebot
import pytest
from fastapi import FastAPI

from memory_core import EvidenceRef, NewExperience, Settings, Yuji
from memory_core.storage import InjectedItem

TOKEN = "test-console-token-carry-45"
A, B, P = "group:300", "group:301", "private:7"


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


async def said(core: Yuji, scope: str, who: str, name: str, text: str) -> int:
    return await core.archive.append(
        NewExperience(
            scope, f"{scope}-{text}", who, text, sent_at=core.clock.now(), sender_name=name
        )
    )


async def world(core: Yuji) -> tuple[int, int, int]:
    """小明 (7) in A (says he moves; 阿花 tells he owes her), in B (says he likes tea)
    and his private chat."""
    moving = await said(core, A, "7", "小明", "我下个月搬去成都<b>")
    owes = await said(core, A, "8", "阿花", "小明欠我五百块")
    tea = await said(core, B, "7", "明哥", "我爱喝普洱茶")
    await said(core, P, "7", "小明", "在吗")
    ids = []
    for scope, content, evidence in (
        (A, "小明下个月搬去成都<b>", moving),
        (A, "小明欠阿花五百块", owes),
        (B, "明哥爱喝普洱茶", tea),
    ):
        written = await core.memories.write(
            scope,
            type="fact",
            subject="小明" if scope == A else "明哥",
            content=content,
            evidence=[EvidenceRef(experience_id=evidence)],
        )
        ids.append(written.memory.id)
    return ids[0], ids[1], ids[2]


def rows(html: str, table: str) -> list[str]:
    body = html.split(f'<table id="{table}">', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr class="memory" data-id="(\d+)">', body)


async def test_the_person_page_shows_what_travels_where(
    client: httpx.AsyncClient, yuji_core: Yuji
) -> None:
    moving, owes, tea = await world(yuji_core)
    html = (await client.get(f"/yuji/chats/{A}/people/7")).text
    assert '<b id="carry-private">开</b>' in html
    assert '<b id="carry-groups">关</b>' in html
    assert rows(html, "member-carry-out") == [str(moving)]  # to his private chat only
    assert f'href="/yuji/chats/{P}"' in html.split('id="member-carry-out"', 1)[1]
    assert rows(html, "member-carry-into") == []  # groups off: nothing comes into A
    assert str(owes) not in rows(html, "member-carry-out")  # hearsay never travels
    assert "小明下个月搬去成都&lt;b&gt;" in html  # as text

    await yuji_core.carrying.choose("qq", "7", into_groups=True)
    html = (await client.get(f"/yuji/chats/{A}/people/7")).text
    assert '<b id="carry-groups">开</b>' in html
    assert rows(html, "member-carry-into") == [str(tea)]
    out = html.split('id="member-carry-out"', 1)[1].split("</table>", 1)[0]
    assert f"/yuji/chats/{B}" in out
    assert f"/yuji/chats/{P}" in out

    await yuji_core.carrying.block(A, "9")
    html = (await client.get(f"/yuji/chats/{A}/people/7")).text
    assert "管理员拒绝带入" in html
    assert rows(html, "member-carry-into") == []


async def test_this_turn_shows_a_carried_memory_while_it_may_still_travel(
    client: httpx.AsyncClient, yuji_core: Yuji
) -> None:
    moving, _, _ = await world(yuji_core)
    await yuji_core.chat_state.add_injection(
        P,
        trigger_experience_id=None,
        reply_fingerprint=None,
        query="我搬家是哪天来着",
        items=[InjectedItem(moving, "carried", 0.4, "在别的群说过")],
        now=yuji_core.clock.now(),
    )
    html = (await client.get(f"/yuji/chats/{P}/turns")).text
    assert "在别的群说过" in html
    assert "小明下个月搬去成都&lt;b&gt;" in html
    assert f'href="/yuji/chats/{A}/memories/{moving}"' in html
    await yuji_core.carrying.choose("qq", "7", into_private=False)
    html = (await client.get(f"/yuji/chats/{P}/turns")).text
    assert "小明下个月搬去成都" not in html
