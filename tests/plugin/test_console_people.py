"""The console's people pages on the bot's real FastAPI app: a chat's members with
their names over time, a member's memories marked with whose word they are, a hostile
name shown as text, nothing of another chat (a guessed user id is a 404 page), and no
form that changes anything."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from html import escape
from pathlib import Path

import httpx
import nonebot
import pytest
from fastapi import FastAPI

from memory_core import Settings, Yuji
from memory_core.cli.demo_world import DemoReport, load_demo
from tests.fixtures.people_world import (
    BOT,
    GROUP,
    HOSTILE,
    HOSTILE_NAME,
    LIN,
    MENTIONED,
    OTHER,
    OUTSIDER,
    mention,
    people_world,
)

from .conftest import NICKNAME

TOKEN = "test-console-token-people-42"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def yuji_settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "yuji-data", nicknames=(NICKNAME,), console_token=TOKEN)


@pytest.fixture
async def world(yuji_core: Yuji) -> DemoReport:
    loaded = await load_demo(yuji_core, people_world())
    await mention(yuji_core)
    return loaded


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = nonebot.get_app()
    assert isinstance(app, FastAPI)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.9", 5000))
    async with httpx.AsyncClient(
        transport=transport, base_url="http://yuji.test", headers=BEARER
    ) as c:
        yield c


async def test_the_people_page_lists_members_with_their_names_over_time(
    client: httpx.AsyncClient, world: DemoReport
) -> None:
    response = await client.get(f"/yuji/chats/{GROUP}/people")
    assert response.status_code == 200
    html = response.text
    assert f'href="/yuji/chats/{GROUP}/people">成员</a>' in html  # in the chat's navigation
    members = dict(re.findall(r'<tr class="member" data-user="([^"]+)">(.*?)\n</tr>', html, re.S))
    assert set(members) == {LIN, "20002", HOSTILE, BOT, MENTIONED}
    lin = members[LIN]
    assert f'href="/yuji/chats/{GROUP}/people/{LIN}">林林</a>' in lin
    assert lin.index("林林") < lin.index("小林")  # latest first
    assert lin.count("群名片") == 2
    assert "他人转述 1" in lin
    assert "仅本人 1" in lin
    assert "2 条" in lin
    card = re.search(r'<td class="member-card">(.*?)</td>', lin, re.S)
    assert card is not None
    assert "第 2 版" in card.group(1)
    assert "- 下个月搬去杭州" in card.group(1)
    assert "等 2 行" in card.group(1)
    assert "怕狗" not in card.group(1)  # the first line only: the member page has the rest
    assert "没有" in members["20002"].split('class="member-card"')[1]
    assert "别的群的卡片" not in html
    assert "机器人" in members[BOT]
    assert "机器人" not in lin
    assert "被@" in members[MENTIONED]
    assert "老王" in members[MENTIONED]
    assert OUTSIDER not in html
    assert "外群的人" not in html


async def test_a_members_page_marks_hearsay_and_links_each_memory(
    client: httpx.AsyncClient, world: DemoReport
) -> None:
    response = await client.get(f"/yuji/chats/{GROUP}/people/{LIN}")
    assert response.status_code == 200
    html = response.text
    ids = world.memory_ids[GROUP]
    memories = dict(re.findall(r'<tr class="memory" data-id="(\d+)"[^>]*>(.*?)\n</tr>', html, re.S))
    assert list(memories) == [str(ids[1]), str(ids[0])]
    hearsay, own = memories[str(ids[1])], memories[str(ids[0])]
    assert "小林怕狗" in hearsay
    assert ">他人转述</span>" in hearsay
    assert ">仅本人</span>" in own
    assert f'href="/yuji/chats/{GROUP}/memories/{ids[1]}"' in hearsay
    assert '<span class="chat-id" id="member-id">20001</span>' in html
    assert "以后" not in html  # messages are not shown here, only names and memories
    names = html[html.index('id="member-names"') :]
    assert names.index("林林") < names.index("小林")
    assert "别的群的秘密" not in html
    # their current card here, with its version; not the other group's card
    card = re.search(
        r'<div class="card" id="member-card" data-version="(\d+)">(.*?)</div>', html, re.S
    )
    assert card is not None
    assert card.group(1) == "2"
    assert "第 2 版" in card.group(2)
    assert "<pre>- 下个月搬去杭州\n- （阿珍说）怕狗</pre>" in card.group(2)
    assert "别的群的卡片" not in html
    # the memory it links to opens
    linked = await client.get(f"/yuji/chats/{GROUP}/memories/{ids[1]}")
    assert linked.status_code == 200
    assert "小林怕狗" in linked.text
    # a member the nightly wrote no card for: the page says so
    uncarded = (await client.get(f"/yuji/chats/{GROUP}/people/{MENTIONED}")).text
    assert 'id="member-card"' in uncarded
    assert "还没有人物卡" in uncarded
    assert "还没有人物卡" not in html


async def test_read_only_no_form_changes_anything(
    client: httpx.AsyncClient, world: DemoReport
) -> None:
    for path in (f"/yuji/chats/{GROUP}/people", f"/yuji/chats/{GROUP}/people/{LIN}"):
        html = (await client.get(path)).text
        forms = re.findall(r'<form[^>]*action="([^"]*)"', html)
        assert forms == ["/yuji/logout"], path  # the header's logout only
    for method in ("POST", "PUT", "DELETE"):
        response = await client.request(method, f"/yuji/chats/{GROUP}/people/{LIN}")
        assert response.status_code == 405, method


async def test_a_hostile_name_is_text(client: httpx.AsyncClient, world: DemoReport) -> None:
    for path in (
        f"/yuji/chats/{GROUP}/people",
        f"/yuji/chats/{GROUP}/people/{HOSTILE}",
        f"/yuji/chats/{GROUP}/memories/{world.memory_ids[GROUP][3]}",
    ):
        html = (await client.get(path)).text
        assert HOSTILE_NAME not in html, path
        assert escape(HOSTILE_NAME, quote=False) in html, path
    for path in (f"/yuji/chats/{GROUP}/people", f"/yuji/chats/{GROUP}/people/{HOSTILE}"):
        html = (await client.get(path)).text  # their card is markup too: shown as text
        assert f"- {escape(HOSTILE_NAME, quote=False)}" in html, path
    person = (await client.get(f"/yuji/chats/{GROUP}/people/{HOSTILE}")).text
    assert f"<title>{escape(HOSTILE_NAME, quote=False)} · 成员 · 读书会</title>" in person


async def test_another_chats_member_or_a_guessed_id_is_404(
    client: httpx.AsyncClient, world: DemoReport
) -> None:
    for user_id in (OUTSIDER, "99999", "%3Cimg%20src%3Dx%3E", "-1"):
        response = await client.get(f"/yuji/chats/{GROUP}/people/{user_id}")
        assert response.status_code == 404, user_id
        assert "找不到" in response.text
        assert "外群的人" not in response.text
        assert "鹦鹉" not in response.text
        assert "<img src=x>" not in response.text
    assert (await client.get(f"/yuji/chats/{OTHER}/people/{OUTSIDER}")).status_code == 200
    assert (await client.get("/yuji/chats/nonsense/people")).status_code == 404
    # without the token, nothing
    async with httpx.AsyncClient(
        transport=client._transport,  # pyright: ignore[reportPrivateUsage]
        base_url="http://yuji.test",
    ) as bare:
        refused = await bare.get(f"/yuji/chats/{GROUP}/people/{LIN}")
    assert refused.status_code == 303
    assert "小林怕狗" not in refused.text
