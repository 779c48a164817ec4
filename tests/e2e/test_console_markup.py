"""What a group member can put in a console page: messages, nicknames, group names,
memories, cards, diaries and images carrying markup, on every page in a real Chromium
and through the JSON API. Nothing runs, nothing becomes an element, and every text
reads as it was written.

The store is written as the demo's is (`load_demo`: the archive, memories, nightly
results and reply records through the core's own write paths), fed hostile text; the
running bot then takes more from a OneBot peer, as from a QQ client: a group's rename,
a member's group card and a message with an SVG image the archive downloads.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

import httpx
import pytest
from playwright.async_api import Browser, Page

from memory_core import Actor, Settings, Yuji
from memory_core.cli.demo_world import load_demo
from tests.fakes.file_server import FileServer

from .harness import BotProcess, query, wait_until
from .test_console_browser import TOKEN, base, browser, log_in, page

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("console-browser")]

__all__ = ["browser", "page"]

MARKUP = (
    "<img src=x onerror=\"window.__pwned=1;document.title='HACKED'\">"
    "<script>window.__pwned=2</script>"
    '<a href="javascript:window.__pwned=3">点我</a>'
    "\"'><svg onload=window.__pwned=4>"
    '<i class="__pwned" hx-get="/yuji/audit" hx-trigger="load">htmx</i>'
    "{{ 7*7 }}{% if true %}模板{% endif %}"
)
"""Each piece would run or become an element if a page took it as markup: an image
whose error handler and a script that set `window.__pwned` (the first also retitles
the page), a `javascript:` link, a quote that would close an attribute, an element
htmx would load on its own, and template syntax (Jinja2 renders the templates, never
the data)."""


NAME_MARKUP = (
    "<img src=x onerror=\"window.__pwned=1;document.title='HACKED'\">"
    "<script>window.__pwned=2</script>"
    '<a href="javascript:window.__pwned=3">点我</a>{{ 7*7 }}'
)
"""The markup a name holds: the store keeps 200 characters of a chat's name."""


PERSON_MARKUP = (
    "<img src=x onerror=\"window.__pwned=1;document.title='HACKED'\">"
    "<script>window.__pwned=2</script>"
)
"""The markup a member's name holds: the person index keeps names of up to 128
characters (memory_core/people/names.py) and leaves longer ones out."""


def hostile(tag: str) -> str:
    """`tag` (where the text was put, to name it in a failure) and the markup."""
    return f"{tag}{MARKUP}"


def named(tag: str) -> str:
    """A name: `tag` and the markup that fits in one."""
    return f"{tag}{NAME_MARKUP}"


NAMES = frozenset({"群名", "改名", "昵称", "群名片", "私聊昵称"})
PERSONS = frozenset({"群友名"})


def person_named(tag: str) -> str:
    """A member's name: `tag` and the markup that fits in one."""
    return f"{tag}{PERSON_MARKUP}"


def written(tag: str) -> str:
    """What was written under `tag`: a name, a member's name or a text."""
    if tag in PERSONS:
        return person_named(tag)
    return named(tag) if tag in NAMES else hostile(tag)


GROUP = "group:900777"
PRIVATE = "private:30001"
LIVE_GROUP_ID = 900778
LIVE_GROUP = f"group:{LIVE_GROUP_ID}"


def planted_svg(namespace: str) -> bytes:
    """An image a member can send: SVG is `image/*`, which the archive downloads. Its
    root carries SVG's namespace name (`namespace`, read from the browser), without
    which a browser opening it on its own would not take it as SVG nor run its
    script."""
    return (
        f'<svg xmlns="{namespace}" width="40" height="40"'
        " onload=\"window.__pwned=5;document.title='HACKED'\">"
        "<script>window.__pwned=6</script>"
        '<rect width="40" height="40" fill="#f08c2e"/></svg>'
    ).encode()


async def svg_namespace(browser: Browser) -> str:
    """The namespace Chromium's HTML parser gives an `<svg>` element."""
    page = await browser.new_page()
    try:
        return await page.evaluate(
            "() => new DOMParser().parseFromString('<svg></svg>', 'text/html')"
            ".querySelector('svg').namespaceURI"
        )
    finally:
        await page.close()


INERT = """() => {
  const planted = [...document.querySelectorAll(
    'img[src=x], svg, i.__pwned, a[href^="javascript:" i],'
    + ' script:not([src="/yuji/static/htmx.min.js"])'
  )];
  for (const e of document.querySelectorAll("*")) {
    if ([...e.attributes].some(a => /^on/i.test(a.name))) planted.push(e);
  }
  return {
    pwned: window.__pwned ?? null,
    retitled: document.title === "HACKED",
    planted: [...new Set(planted)].map(e => e.outerHTML.slice(0, 120)),
  };
}"""
"""What the markup did to the page: whether any of it ran, and the elements it planted
(the console's own markup has no `on…` attribute, no SVG and one script, htmx's).
A text attribute holding the markup (a search field's value) is text, not planted."""
NOTHING = {"pwned": None, "retitled": False, "planted": []}


EMPTY = ("memories", "relations", "aliases", "cards", "diaries", "timeline", "turns")


def the_world() -> dict[str, Any]:
    """A world in `load_demo`'s shape whose every member-written text carries markup."""
    group = {
        "scope": GROUP,
        "name": named("群名"),
        "messages": [
            {
                "at": [0, 0, 1],
                "sender_id": "30001",
                "sender": named("昵称"),
                "text": "我不吃香菜" + hostile("消息"),
            },
            {"at": [0, 0, 2], "sender_id": "30002", "sender": "小林", "text": "收到"},
            {"at": [0, 0, 4], "sender_id": "30003", "sender": person_named("群友名"), "text": "嗨"},
        ],
        "memories": [
            {
                "type": "preference",
                "subject": hostile("主体"),
                "content": "阿珍不吃香菜，点外卖要备注" + hostile("记忆"),
                "evidence": [0],
                "importance": 0.8,
            },
            {"type": "fact", "subject": "小林", "content": hostile("另一条"), "evidence": [1]},
            {
                "type": "fact",
                "subject": person_named("群友名"),
                "content": hostile("群友记忆"),
                "evidence": [2],
            },
        ],
        "relations": [{"src": 1, "dst": 0, "kind": "related", "reason": hostile("关系")}],
        "aliases": [[hostile("别名"), hostile("主体")]],
        "cards": [
            {"day": 2, "cards": {"preferences": "- " + hostile("旧卡片")}},
            {"day": 1, "cards": {"preferences": "- " + hostile("新卡片")}},
        ],
        "diaries": [{"day": 1, "content": hostile("日记")}],
        "timeline": [{"day": 1, "content": hostile("时间线")}],
        "turns": [
            {
                "message": 0,
                "query": hostile("提问"),
                "memories": [0],
                "cited": [0],
                "blocks": [["回忆到的记忆", "[m:MEM0] " + hostile("注入块")]],
            }
        ],
    }
    private = {
        "scope": PRIVATE,
        "name": named("私聊昵称"),
        "messages": [
            {
                "at": [0, 0, 3],
                "sender_id": "30001",
                "sender": named("私聊昵称"),
                "text": hostile("私聊"),
            }
        ],
        **{k: [] for k in EMPTY},
    }
    return {"label": "样例数据：群友写进页面的标记", "chats": [group, private]}


@dataclass(frozen=True)
class Served:
    bot: BotProcess
    memory_ids: tuple[int, ...]
    svg: str
    """The stored SVG's content hash."""
    day: str
    """The local day the messages were written on (`?day=` of the archive pages)."""


@pytest.fixture(scope="module")
def images() -> Iterator[FileServer]:
    server = FileServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
async def served(
    tmp_path_factory: pytest.TempPathFactory, images: FileServer, browser: Browser
) -> AsyncIterator[Served]:
    tmp = tmp_path_factory.mktemp("console-markup")
    core = await Yuji.open(Settings(data_dir=tmp / "data"))
    try:
        world = await load_demo(core, the_world())
        day = f"{core.clock.now().astimezone(ZoneInfo(core.settings.timezone)):%Y-%m-%d}"
        ids = world.memory_ids[GROUP]
        # an operator's action whose reason was pasted from the chat (the audit page)
        await core.console.act(
            GROUP, ids[0], "star", Actor("127.0.0.1", "session"), reason=hostile("审计")
        )
        # an alert naming the chat (the overview's last seven days)
        core.alerts.fire(f"nightly:{GROUP}", f"夜间整理 {hostile('提醒')} 连续失败")
    finally:
        await core.close()
    env = {"YUJI_CONSOLE_TOKEN": TOKEN, "YUJI_ATTACHMENT_ALLOW_LOOPBACK": "true"}
    bot = BotProcess(tmp, env=env)
    await bot.start()
    try:
        svg = planted_svg(await svg_namespace(browser))
        svg_url = images.add("/cat.svg", svg, content_type="image/svg+xml")
        async with bot.peer() as peer:
            await peer.send_event(
                {
                    "time": 1_795_000_000,
                    "self_id": peer.self_id,
                    "post_type": "notice",
                    "notice_type": "notify",
                    "sub_type": "group_name",
                    "group_id": LIVE_GROUP_ID,
                    "user_id": 30003,
                    "name_new": named("改名"),
                }
            )
            text = {"type": "text", "data": {"text": hostile("直播消息")}}
            image = {"type": "image", "data": {"file": "cat.svg", "url": svg_url}}
            await peer.send_event(
                peer.group_message(
                    [text, image], group_id=LIVE_GROUP_ID, message_id=1, card=named("群名片")
                )
            )
            [(svg,)] = await wait_until(
                lambda: query(
                    bot.database,
                    "SELECT sha256 FROM attachments WHERE status = 'stored' AND mime = ?",
                    ("image/svg+xml",),
                )
            )
            await wait_until(
                lambda: query(
                    bot.database, "SELECT 1 FROM chat_names WHERE scope = ?", (LIVE_GROUP,)
                )
            )
        yield Served(bot, ids, str(svg), day)
    finally:
        await bot.stop()


async def opened(page: Page, url: str) -> dict[str, Any]:
    """Open `url` (every image loaded or failed, htmx idle) and read what ran."""
    await page.goto(url, wait_until="networkidle")
    return await read(page)


async def read(page: Page) -> dict[str, Any]:
    await page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    found: dict[str, Any] = await page.evaluate(INERT)
    found["text"] = await page.evaluate("document.body.innerText")
    return found


def missing(found: dict[str, Any], *tags: str) -> list[str]:
    """The tags whose hostile text the page does not show as text."""
    return [t for t in tags if written(t) not in found["text"]]


def ran(found: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in found.items() if k != "text"}


async def test_the_markup_runs_when_a_page_takes_it_as_markup(page: Page) -> None:
    """The checks below can fail: the same text written into a page as HTML runs."""
    await page.set_content(f"<body><p>{MARKUP}</p></body>")
    found = await read(page)
    assert found["pwned"] is not None
    assert found["retitled"]
    planted = "".join(found["planted"])
    for element in ("<img", "<script", "<a", "<svg", "<i"):
        assert element in planted


async def test_every_page_shows_member_text_as_text(page: Page, served: Served) -> None:
    bot = served.bot
    root = base(bot)
    await log_in(page, bot)
    await page.wait_for_selector("#chats")
    memory = served.memory_ids[0]
    archive = f"archive?day={served.day}"
    pages: dict[str, tuple[str, ...]] = {
        "/": ("群名", "私聊昵称", "改名", "提醒"),
        f"/chats/{GROUP}": ("群名", "主体", "记忆", "另一条"),
        f"/chats/{GROUP}/memories/{memory}": ("主体", "记忆", "昵称", "消息", "别名"),
        f"/chats/{GROUP}/memories/{served.memory_ids[1]}": ("另一条", "关系"),
        f"/chats/{GROUP}/cards": ("旧卡片", "新卡片", "日记", "时间线"),
        f"/chats/{GROUP}/turns": ("提问", "昵称", "记忆", "注入块"),
        f"/chats/{GROUP}/{archive}": ("群名", "昵称", "消息"),
        f"/chats/{GROUP}/work?note={quote(hostile('提示'))}": ("群名", "提示"),
        f"/chats/{GROUP}/people": ("群名", "群友名"),
        f"/chats/{GROUP}/people/30003": ("群名", "群友名", "群友记忆"),
        f"/chats/{GROUP}/people/30002": ("另一条",),
        f"/chats/{PRIVATE}": ("私聊昵称",),
        f"/chats/{PRIVATE}/people": ("私聊昵称",),
        f"/chats/{LIVE_GROUP}/people": ("改名",),
        f"/chats/{PRIVATE}/{archive}": ("私聊昵称", "私聊"),
        f"/chats/{LIVE_GROUP}/{archive}": ("改名", "群名片", "直播消息"),
        "/audit": ("审计",),
        "/settings": (),
    }
    for path, tags in pages.items():
        found = await opened(page, f"{root}{path}")
        assert ran(found) == NOTHING, path
        assert missing(found, *tags) == [], path
    # the chat's name is the page's title, as text
    await opened(page, f"{root}/chats/{GROUP}")
    assert await page.title() == f"{named('群名')} · 鱼记控制台"
    # and a member's name is their page's, as text
    await opened(page, f"{root}/chats/{GROUP}/people/30003")
    assert await page.title() == f"{person_named('群友名')} · 成员 · {named('群名')}"

    # what the form sends comes back as text: the archive's search and day fields ...
    question = hostile("搜索")
    found = await opened(page, f"{root}/chats/{GROUP}/archive?q={quote('我不吃香菜')}")
    assert ran(found) == NOTHING
    assert missing(found, "昵称", "消息") == []
    for field in ("q", "day"):
        found = await opened(page, f"{root}/chats/{GROUP}/archive?{field}={quote(question)}")
        assert ran(found) == NOTHING, field
        assert await page.input_value(f"input[name={field}]") == question
    # ... and recall's, swapped in by htmx, with what it recalled
    await opened(page, f"{root}/chats/{GROUP}")
    for asked, tags in ((question, ("搜索",)), ("阿珍不吃香菜吗", ("记忆",))):
        await page.fill("#search-q", asked)
        await page.click("#search-form button")
        await page.wait_for_function(
            "q => document.querySelector('#recall')?.textContent.includes(q)", arg=asked
        )
        await page.wait_for_load_state("networkidle")
        found = await read(page)
        assert ran(found) == NOTHING, asked
        assert missing(found, *tags) == [], asked
    # the SVG in the archive page is an image, its script never runs there
    found = await opened(page, f"{root}/chats/{LIVE_GROUP}/{archive}")
    image = page.locator(f"img.att[src='/yuji/attachments/{served.svg}']")
    await page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=await image.element_handle()
    )
    assert ran(found) == NOTHING


async def test_an_svg_image_opened_on_its_own_runs_nothing(page: Page, served: Served) -> None:
    """A member's SVG, opened at its own address (as "open image in new tab" does), is
    the console's origin: its scripts would read the page's CSRF token and act."""
    await log_in(page, served.bot)
    await page.wait_for_selector("#chats")
    response = await page.goto(f"{base(served.bot)}/attachments/{served.svg}", wait_until="load")
    assert response is not None
    assert await page.evaluate("() => [window.__pwned ?? null, document.title]") == [None, ""]
    assert await page.evaluate("() => document.querySelectorAll('rect').length") == 1  # shown
    assert response.headers["content-type"] == "image/svg+xml"
    assert "sandbox" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():  # pyright: ignore[reportUnknownVariableType]
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:  # pyright: ignore[reportUnknownVariableType]
            yield from strings(item)


async def test_the_json_api_returns_member_text_as_json_strings(page: Page, served: Served) -> None:
    root = base(served.bot)
    memory = served.memory_ids[0]
    calls: dict[str, tuple[str, ...]] = {
        "/api/chats": ("群名", "私聊昵称", "改名"),
        f"/api/chats/{GROUP}/memories": ("主体", "记忆", "另一条"),
        f"/api/chats/{GROUP}/memories?q={quote('阿珍不吃香菜吗')}": ("主体", "记忆"),
        f"/api/memories/{memory}": ("主体", "记忆", "昵称", "消息", "别名"),
        f"/api/chats/{GROUP}/turns": ("提问", "注入块", "昵称"),
    }
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as client:
        for path, tags in calls.items():
            response = await client.get(f"{root}{path}")
            assert response.status_code == 200, path
            assert response.headers["content-type"] == "application/json", path
            said = "\n".join(strings(response.json()))
            assert [t for t in tags if written(t) not in said] == [], path

    # a browser shown the API's answer shows JSON text, not a page
    await log_in(page, served.bot)
    await page.wait_for_selector("#chats")
    found = await opened(page, f"{root}/api/memories/{memory}")
    assert ran(found) == NOTHING
    assert await page.evaluate("document.contentType") == "application/json"
    assert json.dumps(hostile("记忆"), ensure_ascii=False)[1:-1] in found["text"]
