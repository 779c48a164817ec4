"""Who gets into the console, on the bot's real FastAPI app (the plugin as loaded).

- every /yuji route (walked from the app's route table) refuses a missing or a wrong
  token, and answers 404 while YUJI_CONSOLE_TOKEN is unset;
- a cookie session's change without its CSRF token is refused (Bearer needs none);
- an id of another chat is 404 on pages and in the API;
- failed logins are rate-limited per address.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
import nonebot
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from nonebot_plugin_apscheduler import scheduler
from starlette.routing import BaseRoute

from memory_core import Settings, Yuji
from memory_core.archive.drops import Drop
from memory_core.cli.demo_world import DemoReport, load_demo
from nonebot_plugin_yuji.jobs import nightly as jobs_nightly

from .conftest import NICKNAME

TOKEN = "test-console-token-0123456789"
GROUP = "group:900001"
PRIVATE = "private:20002"
PUBLIC = {("GET", "/yuji/login"), ("POST", "/yuji/login")}


@pytest.fixture
def yuji_settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "yuji-data", nicknames=(NICKNAME,), console_token=TOKEN)


@pytest.fixture
async def world(yuji_core: Yuji) -> DemoReport:
    return await load_demo(yuji_core)


def app() -> FastAPI:
    found = nonebot.get_app()
    assert isinstance(found, FastAPI)
    return found


def client_at(address: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app(), client=(address, 5000))
    return httpx.AsyncClient(transport=transport, base_url="http://yuji.test")


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with client_at("127.0.0.9") as c:
        yield c


def all_routes(routes: Sequence[BaseRoute]) -> Iterator[BaseRoute]:
    """Every route, also inside included routers (newer FastAPI keeps them nested)."""
    for route in routes:
        nested = getattr(route, "original_router", None)
        if nested is not None:
            yield from all_routes(nested.routes)
        else:
            yield route


def console_routes() -> list[tuple[str, str]]:
    """(method, path with sample parameters) of every /yuji route of the app."""
    found: list[tuple[str, str]] = []
    for route in all_routes(app().routes):
        if not isinstance(route, APIRoute) or not route.path.startswith("/yuji"):
            continue
        path = route.path.replace("{scope}", GROUP).replace("{memory_id}", "1")
        path = re.sub(r"\{[^}]+\}", "x", path)
        found += [(method, path) for method in sorted(route.methods)]
    return found


def test_the_console_is_mounted_with_pages_api_and_login() -> None:
    paths = {path for _, path in console_routes()}
    assert {"/yuji/", "/yuji/login", "/yuji/api/chats", "/yuji/audit"} <= paths
    assert {
        f"/yuji/chats/{GROUP}/archive",
        f"/yuji/chats/{GROUP}/work",
        f"/yuji/chats/{GROUP}/work/x",
        "/yuji/attachments/x",
    } <= paths  # the archive and consolidation pages are walked like the rest
    assert len(console_routes()) >= 20


async def test_every_route_refuses_a_missing_or_wrong_token(world: DemoReport) -> None:
    checked = 0
    for i, (method, path) in enumerate(console_routes()):
        if (method, path) in PUBLIC:
            continue
        async with client_at(f"10.0.0.{i + 1}") as client:  # one address each: no throttling
            bare = await client.request(method, path)
            wrong = await client.request(method, path, headers={"Authorization": "Bearer nope"})
            client.cookies.set("yuji_console", "forged")
            cookie = await client.request(method, path)
        assert bare.status_code in (303, 401), (method, path, bare.status_code)
        if bare.status_code == 303:
            assert bare.headers["location"] == "/yuji/login"
        assert wrong.status_code == 401, (method, path, wrong.status_code)
        assert cookie.status_code == bare.status_code, (method, path, cookie.status_code)
        assert "煤球" not in bare.text + wrong.text + cookie.text
        checked += 1
    assert checked >= 18


async def test_the_right_bearer_token_opens_every_page(
    client: httpx.AsyncClient, world: DemoReport
) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    memory_id = world.memory_ids[GROUP][0]
    for path in (
        "/yuji/",
        f"/yuji/chats/{GROUP}",
        f"/yuji/chats/{GROUP}/memories/{memory_id}",
        f"/yuji/chats/{GROUP}/cards",
        f"/yuji/chats/{GROUP}/turns",
        f"/yuji/chats/{GROUP}/archive",
        f"/yuji/chats/{GROUP}/archive?day=2026-11-13&q=香菜",
        f"/yuji/chats/{GROUP}/work",
        "/yuji/settings",
        "/yuji/audit",
        "/yuji/static/htmx.min.js",
        "/yuji/api/chats",
    ):
        response = await client.get(path, headers=bearer)
        assert response.status_code == 200, path
        if path == "/yuji/api/chats":  # a chat's name beside its id, for scripts too
            assert {c["scope"]: c["name"] for c in response.json()}[GROUP] == "周末猫友会"
        if response.headers["content-type"].startswith("text/html"):
            # Times are shown in the configured zone, and the page says which.
            assert "时区 Asia/Shanghai (UTC+08:00)" in response.text, path


async def test_the_console_is_off_without_a_token(
    client: httpx.AsyncClient, yuji_core: Yuji
) -> None:
    yuji_core.live.current = yuji_core.settings.with_changes(console_token="")
    for method, path in console_routes():
        response = await client.request(method, path, headers={"Authorization": "Bearer "})
        assert response.status_code == 404, (method, path)


async def login(client: httpx.AsyncClient) -> str:
    """Log in through the form; returns the session's CSRF token from a page."""
    response = await client.post("/yuji/login", data={"token": TOKEN})
    assert response.status_code == 303
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie
    assert "samesite=strict" in cookie
    page = await client.get("/yuji/")
    assert page.status_code == 200
    match = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert match is not None
    return match.group(1)


async def test_a_session_change_needs_its_csrf_token(
    client: httpx.AsyncClient, world: DemoReport, yuji_core: Yuji
) -> None:
    csrf = await login(client)
    memory_id = world.memory_ids[GROUP][3]
    action = f"/yuji/chats/{GROUP}/memories/{memory_id}/retract"
    refused = [
        await client.post(action),
        await client.post(action, data={"csrf": "forged"}),
        await client.post(action, headers={"X-CSRF-Token": "forged"}),
        await client.post(f"/yuji/api/memories/{memory_id}/retract"),
    ]
    assert [r.status_code for r in refused] == [403, 403, 403, 403]
    assert (await yuji_core.memories.get(GROUP, memory_id)).status == "active"
    for work in ("batch", "night", "circuit"):  # the consolidation page's buttons
        response = await client.post(f"/yuji/chats/{GROUP}/work/{work}", data={"day": ""})
        assert response.status_code == 403, work
    done = await client.post(action, data={"csrf": csrf})
    assert done.status_code == 303
    assert (await yuji_core.memories.get(GROUP, memory_id)).status == "retracted"
    audit = await yuji_core.console.audit()
    assert [(a.action, a.target, a.via, a.address) for a in audit] == [
        ("retract", f"{GROUP}#{memory_id}", "session", "127.0.0.9")
    ]


async def test_ids_of_another_chat_are_404(
    client: httpx.AsyncClient, world: DemoReport, yuji_core: Yuji
) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    private_id = world.memory_ids[PRIVATE][0]
    for method, path in (
        ("GET", f"/yuji/chats/{GROUP}/memories/{private_id}"),
        ("POST", f"/yuji/chats/{GROUP}/memories/{private_id}/retract"),
        ("GET", f"/yuji/api/memories/{private_id}?scope={GROUP}"),
        ("POST", f"/yuji/api/memories/{private_id}/retract?scope={GROUP}"),
        ("GET", "/yuji/api/memories/999999"),
    ):
        response = await client.request(method, path, headers=bearer)
        assert response.status_code == 404, (method, path)
        assert "生日礼物" not in response.text
    assert (await yuji_core.memories.get(PRIVATE, private_id)).status == "active"
    own = await client.get(f"/yuji/api/memories/{private_id}?scope={PRIVATE}", headers=bearer)
    assert own.json()["memory"]["content"].startswith("阿珍在给小林准备生日礼物")


async def test_failed_logins_are_rate_limited(client: httpx.AsyncClient) -> None:
    statuses = [
        (await client.post("/yuji/login", data={"token": f"guess-{i}"})).status_code
        for i in range(7)
    ]
    assert statuses == [401] * 5 + [429] * 2
    blocked = await client.post("/yuji/login", data={"token": TOKEN})
    assert blocked.status_code == 429
    assert "retry-after" in blocked.headers
    # wrong Bearer tokens count too, and the right one is refused while blocked
    bearer = await client.get("/yuji/api/chats", headers={"Authorization": f"Bearer {TOKEN}"})
    assert bearer.status_code == 429
    async with client_at("127.0.0.10") as elsewhere:
        assert (await elsewhere.post("/yuji/login", data={"token": TOKEN})).status_code == 303


async def test_a_filter_change_gets_only_the_memory_table(
    client: httpx.AsyncClient, world: DemoReport
) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    path = f"/yuji/chats/{GROUP}?type=preference&status=active"
    part = await client.get(path, headers={**bearer, "HX-Request": "true"})
    whole = await client.get(path, headers=bearer)
    assert "<header>" not in part.text
    assert "<header>" in whole.text
    assert "共 2 条" in part.text
    assert "阿珍不吃香菜" in part.text
    assert "煤球是小林养的猫" not in part.text


async def test_archive_by_day_and_search_with_images(
    client: httpx.AsyncClient, world: DemoReport, yuji_core: Yuji
) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    found = await client.get(f"/yuji/chats/{GROUP}/archive?q=安安宠物诊所", headers=bearer)
    assert found.status_code == 200
    assert "一共花了 680 块" in found.text
    assert "/yuji/attachments/" in found.text
    sha = re.search(r"/yuji/attachments/([0-9a-f]{64})", found.text)
    assert sha is not None
    image = await client.get(f"/yuji/attachments/{sha.group(1)}", headers=bearer)
    assert (image.status_code, image.headers["content-type"]) == (200, "image/png")
    assert (await client.get("/yuji/attachments/" + "0" * 64, headers=bearer)).status_code == 404
    day = (yuji_core.clock.now() - timedelta(days=7)).astimezone(ZoneInfo("Asia/Shanghai"))
    that_day = await client.get(f"/yuji/chats/{GROUP}/archive?day={day:%Y-%m-%d}", headers=bearer)
    assert "我不吃香菜" in that_day.text
    assert "680" not in that_day.text


async def test_work_page_runs_a_batch_and_closes_a_circuit(
    client: httpx.AsyncClient, world: DemoReport, yuji_core: Yuji
) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    health = await yuji_core.nightly.health.get(GROUP)
    await yuji_core.nightly.health.save(
        replace(health, circuit_open=True, consecutive_failures=3), yuji_core.clock.now()
    )
    page = await client.get(f"/yuji/chats/{GROUP}/work", headers=bearer)
    assert "熔断中" in page.text
    closed = await client.post(f"/yuji/chats/{GROUP}/work/circuit", headers=bearer)
    assert closed.status_code == 303
    assert not (await yuji_core.nightly.health.get(GROUP)).circuit_open
    batch = await client.post(f"/yuji/chats/{GROUP}/work/batch", headers=bearer)
    assert batch.status_code == 303
    note = await client.get(batch.headers["location"], headers=bearer)
    assert "没有配置模型" in note.text
    assert [a.action for a in await yuji_core.console.audit()] == ["run_batch", "close_circuit"]


async def test_moving_the_nightly_time_moves_the_night_job(
    client: httpx.AsyncClient, yuji_core: Yuji
) -> None:
    def fires_at() -> tuple[str, str]:
        job = scheduler.get_job(jobs_nightly.NIGHT_JOB_ID)
        assert job is not None
        fields = {f.name: str(f) for f in job.trigger.fields}
        return fields["hour"], fields["minute"]

    bearer = {"Authorization": f"Bearer {TOKEN}"}
    jobs_nightly.follow(yuji_core.settings)
    assert fires_at() == ("4", "0")
    moved = await client.post(
        "/yuji/settings/nightly_time", data={"value": "05:30"}, headers=bearer
    )
    assert moved.status_code == 303
    assert yuji_core.settings.nightly_time == "05:30"
    assert fires_at() == ("5", "30")
    reset = await client.post("/yuji/settings/nightly_time/reset", headers=bearer)
    assert reset.status_code == 303
    assert fires_at() == ("4", "0")


def test_the_zone_label_carries_the_offset_in_force() -> None:
    from datetime import UTC, datetime

    from nonebot_plugin_yuji.console.format import zone_label

    zone = ZoneInfo("America/New_York")
    assert zone_label(zone, datetime(2026, 1, 5, tzinfo=UTC)) == "America/New_York (UTC-05:00)"
    assert zone_label(zone, datetime(2026, 7, 5, tzinfo=UTC)) == "America/New_York (UTC-04:00)"


async def test_the_overview_shows_the_archive_and_what_it_dropped(
    client: httpx.AsyncClient, world: DemoReport, yuji_core: Yuji
) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    page = await client.get("/yuji/", headers=bearer)
    assert re.search(r"归档：.*正常.*本次启动以来丢弃 <span class=\"ok\">0 条", page.text, re.S)
    received = yuji_core.clock.now()
    yuji_core.archive.writer.drops.add(Drop(GROUP, "x1", received, "DataError", "a NUL byte"))
    page = await client.get("/yuji/", headers=bearer)
    assert '丢弃 <span class="bad">1 条</span>（DataError 1）' in page.text
