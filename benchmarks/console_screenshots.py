"""The console's screenshots in docs/ (the README shows the overview), made from
`yuji demo` in headless Chromium.

    .venv/bin/python -m benchmarks.console_screenshots [overview recall archive people
        person] [--out docs] [--dir data-demo]

Runs `yuji demo --dir DIR` as a newcomer does (DIR relative to the checkout, whose
`data-demo/` is the default) on a free port, reads the one-time token it prints, logs
in and saves each page asked for (all five by default) at 1280x860 in zh-CN:
`console-overview.png`, `console-recall.png` (a filter and a recall),
`console-archive.png` (a search whose message has an image), `console-people.png`
(the group's members, their names over time and cards) and `console-person.png` (one
member: their person card and the memories about them). The overview names the
data folder, so a run in a temporary folder is refused; a DIR this run made is removed
afterwards. The pictures in docs/ were made with `--dir /home/you/yuji/data-demo`.

Needs the test extra's Playwright, Debian's `chromium` and `fonts-noto-cjk`: a page
whose Chinese would draw as boxes is refused too (tests/e2e/tofu.js).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.async_api import Page, async_playwright

from tests.e2e.harness import free_port
from tests.e2e.test_console_browser import CHROMIUM, FLAGS, GROUP, missing_glyphs

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ("overview", "recall", "archive", "people", "person")
CARDED = "20002"
"""The demo group's member with a person card (阿珍, two versions)."""
START_S = 60.0
TOKEN_LINE = "一次性令牌"


def start_demo(folder: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "memory_core.cli", "demo", "--dir", str(folder)]
    with log.open("wb") as out:
        return subprocess.Popen(
            [*command, "--port", str(port)], cwd=ROOT, env=env, stdout=out, stderr=out
        )


def token_of(demo: subprocess.Popen[bytes], log: Path, port: int) -> str:
    """The token the demo printed, once its console answers."""
    deadline = time.monotonic() + START_S
    token = ""
    with httpx.Client(timeout=2) as client:
        while True:
            printed = log.read_text("utf-8", errors="replace")
            if demo.poll() is not None:
                raise SystemExit(f"yuji demo exited with {demo.returncode}:\n{printed}")
            if time.monotonic() > deadline:
                raise SystemExit(f"yuji demo not serving after {START_S:g}s:\n{printed}")
            for line in printed.splitlines():
                if line.startswith(TOKEN_LINE):
                    token = line.split("：", 1)[1].strip()
            with contextlib.suppress(httpx.HTTPError):
                answer = client.get(f"http://127.0.0.1:{port}/yuji/login")
                if token and answer.status_code == 200:
                    return token
            time.sleep(0.3)


async def overview(page: Page, _root: str) -> None:
    text = await page.text_content("main") or ""
    if tempfile.gettempdir() in text:
        raise SystemExit(
            "the overview names a temporary folder: give --dir a folder a reader knows"
        )
    await page.wait_for_selector("#archive")  # the archive writer's row


async def recall(page: Page, _root: str) -> None:
    await page.click(f"a[href='/yuji/chats/{GROUP}']")
    await page.check("input[name=type][value=preference]")
    await page.wait_for_function(
        "document.querySelector('#memory-list').textContent.includes('共 2 条')"
    )
    await page.fill("#search-q", "阿珍不吃香菜吗")
    await page.click("#search-form button")
    await page.locator("#search-results tr.recalled").first.wait_for()


async def archive(page: Page, root: str) -> None:
    await page.goto(f"{root}/chats/{GROUP}/archive")
    await page.fill("#archive-q", "安安宠物诊所")
    await page.click("form.filters button")
    await page.wait_for_url("**/archive?*q=*")
    image = page.locator("#archive tr", has_text="一共花了 680 块").locator("img.att")
    await image.wait_for()
    await page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=await image.element_handle()
    )


async def people(page: Page, root: str) -> None:
    await page.goto(f"{root}/chats/{GROUP}/people")
    await page.locator("#people tr.member").first.wait_for()


async def person(page: Page, root: str) -> None:
    await page.goto(f"{root}/chats/{GROUP}/people/{CARDED}")
    await page.locator("#member-card pre").wait_for()


async def shoot(port: int, token: str, shots: list[str], out: Path, chromium: str) -> None:
    steps = {
        "overview": overview,
        "recall": recall,
        "archive": archive,
        "people": people,
        "person": person,
    }
    root = f"http://127.0.0.1:{port}/yuji"
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            context = await browser.new_context(
                viewport={"width": 1280, "height": 860}, locale="zh-CN"
            )
            page = await context.new_page()
            await page.goto(f"{root}/login")
            await page.fill("input[name=token]", token)
            await page.click("button[type=submit]")
            await page.wait_for_selector("#chats")
            for name in shots:
                await steps[name](page, root)
                boxes = await missing_glyphs(page)
                if boxes:
                    raise SystemExit(
                        f"{name}: these draw as boxes (apt-get install fonts-noto-cjk): {boxes}"
                    )
                path = out / f"console-{name}.png"
                await page.screenshot(path=str(path), full_page=False)
                print(f"{path} ({path.stat().st_size:,} bytes)")
        finally:
            await browser.close()


def stop(demo: subprocess.Popen[bytes]) -> None:
    """SIGINT, as Ctrl+C: the demo stops its bot (killed if it hangs)."""
    if demo.poll() is None:
        demo.send_signal(signal.SIGINT)
    try:
        demo.wait(timeout=30)
    except subprocess.TimeoutExpired:
        demo.kill()
        demo.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("shots", nargs="*", help=f"which of {', '.join(SHOTS)} (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="where the PNGs go")
    parser.add_argument("--dir", type=Path, default=Path("data-demo"), help="the demo's folder")
    parser.add_argument("--chromium", default=CHROMIUM)
    args = parser.parse_args()
    shots: list[str] = args.shots or list(SHOTS)
    if unknown := [s for s in shots if s not in SHOTS]:
        parser.error(f"unknown screenshot {unknown[0]!r} (choose from {', '.join(SHOTS)})")
    folder: Path = args.dir if args.dir.is_absolute() else ROOT / args.dir
    made = not folder.exists()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="yuji-shots-") as tmp:
        log = Path(tmp) / "demo.log"
        demo = start_demo(folder, port, log)
        try:
            token = token_of(demo, log, port)
            asyncio.run(shoot(port, token, shots, args.out, args.chromium))
        finally:
            stop(demo)
            if made:
                shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
