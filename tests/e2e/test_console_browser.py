"""The web console in a real browser: headless Chromium (Debian's `chromium`) driven by
Playwright, against the real bot process serving the demo world.

One bot and one browser for the whole module. Without Playwright or the browser the
tests skip and say what to install. The screenshots in docs/ are made from `yuji demo`
by benchmarks/console_screenshots.py (here the overview would name the test's
temporary folder).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from memory_core import Settings, Yuji
from memory_core.cli.demo_world import DemoReport, load_demo

from .harness import BotProcess

CHROMIUM = os.environ.get("YUJI_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TOKEN = "browser-test-token-5a1f3c"
GROUP = "group:900001"
GROUP_NAME = "周末猫友会"
"""The demo world's name of GROUP (memory_core/console/data/demo_world.json)."""
TOFU = (Path(__file__).with_name("tofu.js")).read_text("utf-8")
"""A page function: the Chinese characters under a node that render as the missing-glyph
box (the same pixels as an unassigned private-use character in the same font)."""

try:
    from playwright.async_api import Browser, Page, async_playwright
except ImportError:  # pragma: no cover - depends on the machine
    async_playwright = None

pytestmark = [
    pytest.mark.e2e,
    # One worker under pytest-xdist (`--dist loadgroup`): the module's one bot and browser.
    pytest.mark.xdist_group("console-browser"),
    pytest.mark.skipif(
        async_playwright is None,
        reason="browser tests need Playwright: pip install -e '.[test]'",
    ),
    pytest.mark.skipif(
        not Path(CHROMIUM).is_file(),
        reason=f"browser tests need Chromium at {CHROMIUM}: apt-get install -y chromium "
        "(or set YUJI_CHROMIUM to its path)",
    ),
]


async def missing_glyphs(page: Page, selector: str = "body") -> str:
    """The Chinese characters on the page drawn as boxes; asserts some were checked."""
    found = await page.evaluate(TOFU, await page.query_selector(selector))
    assert found["checked"] > 0, f"no Chinese text under {selector}"
    return str(found["missing"])


async def platform_fonts(page: Page, selector: str) -> list[str]:
    """The fonts Chromium drew `selector`'s own text with (DevTools protocol), to name
    in a failure what rendered the boxes."""
    cdp = await page.context.new_cdp_session(page)
    await cdp.send("DOM.enable")
    await cdp.send("CSS.enable")
    root = await cdp.send("DOM.getDocument")
    node = await cdp.send(
        "DOM.querySelector", {"nodeId": root["root"]["nodeId"], "selector": selector}
    )
    fonts = await cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})
    await cdp.detach()
    return [f"{f['familyName']} ({f['glyphCount']})" for f in fonts["fonts"]]


PLACEHOLDER_FITS = """e => {
  const s = getComputedStyle(e);
  const c = document.createElement("canvas").getContext("2d");
  c.font = s.font;
  const room = e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  return c.measureText(e.placeholder).width <= room;
}"""


class Shots:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    async def take(self, page: Page, name: str) -> Path:
        path = self.folder / name
        await page.screenshot(path=str(path), full_page=False)
        assert path.stat().st_size > 1000
        return path


@pytest.fixture(scope="module")
async def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[tuple[BotProcess, DemoReport]]:
    tmp = tmp_path_factory.mktemp("console-browser")
    core = await Yuji.open(Settings(data_dir=tmp / "data"))
    try:
        world = await load_demo(core)
    finally:
        await core.close()
    bot = BotProcess(tmp, env={"YUJI_CONSOLE_TOKEN": TOKEN})
    await bot.start()
    try:
        yield bot, world
    finally:
        await bot.stop()


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    assert async_playwright is not None
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport={"width": 1280, "height": 860}, locale="zh-CN")
    opened = await context.new_page()
    try:
        yield opened
    finally:
        await context.close()


def base(bot: BotProcess) -> str:
    return f"http://127.0.0.1:{bot.port}/yuji"


async def log_in(page: Page, bot: BotProcess, token: str = TOKEN) -> Any:
    await page.goto(f"{base(bot)}/")
    assert page.url.endswith("/yuji/login")
    await page.fill("input[name=token]", token)
    return await page.click("button[type=submit]")


async def test_a_wrong_token_is_refused_in_the_browser(
    page: Page, served: tuple[BotProcess, DemoReport]
) -> None:
    bot, _ = served
    await log_in(page, bot, token="not-the-token")
    assert await page.text_content("#login-error") == "令牌不对"
    # the sample world's login says where its token was printed
    assert "yuji demo" in (await page.text_content("#token-source") or "")
    assert await missing_glyphs(page) == "", await platform_fonts(page, "h1")
    cookies = await page.context.cookies()
    assert [c for c in cookies if c.get("name") == "yuji_console"] == []


async def test_log_in_search_open_evidence_retract_and_recall_no_longer_finds_it(
    page: Page, served: tuple[BotProcess, DemoReport], tmp_path: Path
) -> None:
    bot, world = served
    shots = Shots(tmp_path)
    await log_in(page, bot)
    await page.wait_for_selector("#chats")
    session = next(c for c in await page.context.cookies() if c.get("name") == "yuji_console")
    assert session.get("httpOnly") is True
    assert session.get("sameSite") == "Strict"
    named = page.locator(f"#chats td.chat:has(a[href='/yuji/chats/{GROUP}'])")
    assert await named.locator(".chat-name").text_content() == GROUP_NAME
    assert await named.locator(".chat-id").text_content() == GROUP  # the id beside it
    assert "向量存储：文件索引" in (await page.text_content("#backend") or "")
    assert "没有配置整理用的模型" in (await page.text_content("#halted") or "")
    assert await missing_glyphs(page) == "", await platform_fonts(page, "h1")
    await shots.take(page, "console-overview.png")

    # open the chat and ask the real recall (htmx swaps the results in)
    await page.click(f"a[href='/yuji/chats/{GROUP}']")
    await page.wait_for_selector("#search-form")
    assert await page.text_content("h1 .chat-name") == GROUP_NAME
    assert await page.title() == f"{GROUP_NAME} · 鱼记控制台"
    mute = page.locator("input[name=duration]")  # its placeholder is not cut off
    assert await mute.evaluate(PLACEHOLDER_FITS), await mute.get_attribute("placeholder")
    # a filter swaps the memory table in place (htmx)
    await page.check("input[name=type][value=preference]")
    await page.wait_for_function(
        "document.querySelector('#memory-list').textContent.includes('共 2 条')"
    )
    await page.fill("#search-q", "阿珍不吃香菜吗")
    await page.click("#search-form button")
    row = page.locator("#search-results tr.recalled").first
    await row.wait_for()
    coriander = world.memory_ids[GROUP][3]
    assert await row.get_attribute("data-id") == str(coriander)
    headers = await page.locator("#search-results th").all_text_contents()
    assert headers == ["#", "阶段", "档位", "P", "原因", "内容"]
    cells = await row.locator("td").all_text_contents()
    assert cells[1] == "原词"
    assert cells[2] in ("确定", "相关")  # the band in a column of its own
    assert 0 < float(cells[3]) <= 1
    assert cells[3] not in cells[4]  # P once: the reason does not repeat it
    assert "相关度" not in cells[4]
    assert "仅供参考" not in cells[4]
    assert await missing_glyphs(page, "main") == "", await platform_fonts(page, "h1")
    await shots.take(page, "console-recall.png")

    # the memory's evidence leads to the original message
    await row.locator("a").click()
    await page.wait_for_selector("#evidence")
    evidence = await page.locator("#evidence .original-message").all_text_contents()
    assert "我不吃香菜，点外卖记得帮我备注" in evidence

    # retract it (a cookie-session form with its CSRF token)
    await page.click("#act-retract")
    await page.wait_for_selector("#memory-status")
    assert await page.text_content("#memory-status") == "已撤回"

    # recall no longer brings it back
    await page.goto(f"{base(bot)}/chats/{GROUP}")
    await page.fill("#search-q", "阿珍不吃香菜吗")
    await page.click("#search-form button")
    await page.wait_for_selector("#recall")
    ids = await page.locator("#search-results tr.recalled").evaluate_all(
        "rows => rows.map(r => r.dataset.id)"
    )
    assert str(coriander) not in ids

    # and the change is on the audit page
    await page.goto(f"{base(bot)}/audit")
    audit = await page.text_content("#audit") or ""
    assert f"{GROUP}#{coriander}" in audit
    assert "retract" in audit


async def test_the_archive_shows_a_message_with_its_image_from_the_attachment_store(
    page: Page, served: tuple[BotProcess, DemoReport], tmp_path: Path
) -> None:
    bot, _ = served
    await log_in(page, bot)
    await page.wait_for_selector("#chats")
    await page.click(f"a[href='/yuji/chats/{GROUP}']")
    await page.click(f"a[href='/yuji/chats/{GROUP}/archive']")
    await page.fill("#archive-q", "安安宠物诊所")
    await page.click("form.filters button")
    await page.wait_for_url("**/archive?*q=*")
    row = page.locator("#archive tr", has_text="一共花了 680 块")
    image = row.locator("img.att")
    await image.wait_for()
    assert (await image.get_attribute("src") or "").startswith("/yuji/attachments/")
    # the browser fetched it with the session cookie and decoded a real picture
    await page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=await image.element_handle()
    )
    await Shots(tmp_path).take(page, "console-archive.png")

    # the consolidation and nightly page of the same chat
    await page.click(f"a[href='/yuji/chats/{GROUP}/work']")
    await page.wait_for_selector("#night-grid")
    assert "立即整理一批" in (await page.text_content("main") or "")


async def test_the_people_page_lists_members_and_a_members_memories_say_whose_word(
    page: Page, served: tuple[BotProcess, DemoReport], tmp_path: Path
) -> None:
    bot, world = served
    await log_in(page, bot)
    await page.wait_for_selector("#chats")
    await page.click(f"a[href='/yuji/chats/{GROUP}']")
    await page.click(f"a[href='/yuji/chats/{GROUP}/people']")  # the chat's navigation
    await page.wait_for_selector("#people")
    assert await page.title() == f"成员 · {GROUP_NAME}"
    names = await page.locator("#people tr.member .member-name").all_text_contents()
    assert sorted(names) == sorted(["小林", "阿珍", "大刘"])
    lin = page.locator("#people tr.member[data-user='20001']")
    assert await lin.locator(".chat-id").text_content() == "20001"
    cells = await lin.locator("tr.name-seen td").all_text_contents()
    assert cells[:2] == ["小林", "群名片"]  # the name, its source, first and last seen
    assert all(c[:4].isdigit() for c in cells[2:]), cells
    assert "仅本人 1" in (await lin.text_content() or "")
    assert await lin.locator(".member-card").text_content() == "没有"  # no card for 小林
    zhen = page.locator("#people tr.member[data-user='20002'] .member-card")
    assert (await zhen.text_content() or "").startswith("第 2 版 - 不吃香菜")
    assert await missing_glyphs(page, "main") == "", await platform_fonts(page, "h1")
    await Shots(tmp_path).take(page, "console-people.png")

    # a member: their names, and the memories about them with whose word each is
    await lin.locator("a.member-name").click()
    await page.wait_for_selector("#member-memories")
    assert await page.text_content("#member-id") == "20001"
    rows = page.locator("#member-memories tr.memory")
    ids = await rows.evaluate_all("rows => rows.map(r => Number(r.dataset.id))")
    assert ids == [world.memory_ids[GROUP][4], world.memory_ids[GROUP][0]]
    words = await rows.locator(".tag.word").all_text_contents()
    assert words == ["本人说", "仅本人"]
    assert await missing_glyphs(page, "main") == "", await platform_fonts(page, "h1")
    assert "还没有人物卡" in (await page.text_content("#member-card") or "")
    await rows.first.locator("a").click()  # to the memory's detail and its evidence
    await page.wait_for_selector("#evidence")
    assert "西湖" in (await page.text_content("#memory-content") or "")

    # a member with a person card: its newest version, the night that wrote it, the text
    await page.goto(f"{base(bot)}/chats/{GROUP}/people/20002")
    card = page.locator("#member-card")
    await card.wait_for()
    assert await card.get_attribute("data-version") == "2"
    assert "第 2 版" in (await card.locator("p").text_content() or "")
    assert await card.locator("pre").text_content() == (
        "- 不吃香菜，点外卖要备注\n- 在准备十二月的日语 N2 考试，每天背单词"
    )
    assert await card.is_visible()
    assert await missing_glyphs(page, "#member-card") == "", await platform_fonts(page, "h1")

    # another chat's member, guessed into this chat's address: a clear 404
    response = await page.goto(f"{base(bot)}/chats/{GROUP}/people/99999")
    assert response is not None
    assert response.status == 404
    assert await page.text_content("h1") == "404"
    assert "找不到" in (await page.text_content("main") or "")
    response = await page.goto(f"{base(bot)}/chats/private:20002/people/20001")
    assert response is not None
    assert response.status == 404
