"""The console's HTML pages (server-rendered; htmx swaps the search and list parts).

Each handler authorizes, makes one or two `core.console` calls and renders a template.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, get_args
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, HTTPException, Request, Response
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse
from nonebot import get_bots

from memory_core import (
    FOLLOWUP_STATE_WORDS,
    NIGHTLY_STEPS,
    TUNABLES,
    Actor,
    MemoryFilter,
    MemoryStatus,
    MemoryType,
    Yuji,
    bot_offline_key,
    parse_duration,
)

from .. import runtime  # noqa: TID252 (plugin modules load under two names)
from ..jobs import nightly as jobs_nightly  # noqa: TID252
from .gate import PREFIX, authorize
from .web import HERE, ConsoleRoute, page, scope_param

router = APIRouter(prefix=PREFIX, route_class=ConsoleRoute, dependencies=[Depends(authorize)])
Authorized = Annotated[Actor, Depends(authorize)]
STATIC = {
    "htmx.min.js": "text/javascript",
    "htmx-LICENSE.txt": "text/plain",
    "console.css": "text/css",
}
PAGE_SIZE = 50
ATTACHMENT_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox",
    "X-Content-Type-Options": "nosniff",
}
"""An archived image is whatever a chat member sent: an SVG opened at its own address
would run its scripts as the console. Sandboxed and never sniffed, it is only shown."""


def core() -> Yuji:
    return runtime.core()


def online(current: Yuji) -> bool | None:
    """Whether the QQ account is online: a client is connected and its last word was
    not "offline" (None: no client connected)."""
    bots = get_bots()
    if not bots:
        return None
    return not any(current.alerts.is_failing(bot_offline_key(i)) for i in bots)


@router.get("/", response_class=HTMLResponse)
async def overview(request: Request) -> Response:
    current = core()
    data = await current.console.overview(online=online(current))
    return await page(request, current, "overview.html", view=data)


@router.get("/chats/{scope}", response_class=HTMLResponse)
async def chat(request: Request, scope: str) -> Response:
    """The chat page; an htmx request (a filter changed) gets only the memory table."""
    scope = scope_param(scope)
    current = core()
    where = _filter(request)
    memories = await current.console.memory_page(scope, where)
    if request.headers.get("hx-request") == "true":
        return await page(
            request, current, "_memories.html", scope=scope, page_data=memories, where=where
        )
    state = await current.chat_state.state(scope)
    return await page(
        request,
        current,
        "chat.html",
        scope=scope,
        page_data=memories,
        where=where,
        muted_until=state.muted_until,
        types=get_args(MemoryType),
        statuses=get_args(MemoryStatus),
    )


@router.get("/chats/{scope}/search", response_class=HTMLResponse)
async def search(request: Request, scope: str, q: str = "") -> Response:
    """What recall brings for the question, with stage, score and reason."""
    scope = scope_param(scope)
    current = core()
    result = await current.console.search(scope, q) if q.strip() else None
    return await page(request, current, "_search.html", scope=scope, q=q, result=result)


@router.get("/chats/{scope}/memories/{memory_id}", response_class=HTMLResponse)
async def memory(request: Request, scope: str, memory_id: int) -> Response:
    scope = scope_param(scope)
    current = core()
    detail = await current.console.memory(scope, memory_id)
    return await page(request, current, "memory.html", scope=scope, detail=detail)


@router.post("/chats/{scope}/memories/{memory_id}/{action}")
async def memory_action(
    scope: str,
    memory_id: int,
    action: str,
    actor: Authorized,
    content: Annotated[str, Form()] = "",
    reason: Annotated[str, Form()] = "",
) -> Response:
    scope = scope_param(scope)
    await core().console.act(scope, memory_id, action, actor, content=content, reason=reason)
    return RedirectResponse(f"{PREFIX}/chats/{scope}/memories/{memory_id}", status_code=303)


@router.post("/chats/{scope}/mute")
async def mute(scope: str, actor: Authorized, duration: Annotated[str, Form()] = "") -> Response:
    """Mute for a duration ("2h"; empty = until unmuted) or unmute ("0")."""
    scope = scope_param(scope)
    current = core()
    until = None
    if duration.strip() != "0":
        span = parse_duration(duration) if duration.strip() else None
        until = current.clock.now() + (span or timedelta(days=36500))
    await current.console.set_muted(scope, until, actor)
    return RedirectResponse(f"{PREFIX}/chats/{scope}", status_code=303)


@router.get("/chats/{scope}/cards", response_class=HTMLResponse)
async def cards(request: Request, scope: str) -> Response:
    scope = scope_param(scope)
    current = core()
    return await page(
        request,
        current,
        "cards.html",
        scope=scope,
        cards=await current.console.cards(scope),
        diaries=await current.console.diaries(scope),
        timeline=await current.console.timeline(scope),
    )


@router.get("/chats/{scope}/people", response_class=HTMLResponse)
async def people(request: Request, scope: str) -> Response:
    """The chat's members (the person index): their names over time, read-only."""
    scope = scope_param(scope)
    current = core()
    members = await current.console.members(scope)
    return await page(request, current, "people.html", scope=scope, members=members)


@router.get("/chats/{scope}/people/{user_id}", response_class=HTMLResponse)
async def person(request: Request, scope: str, user_id: str) -> Response:
    """One member: names over time and the chat's memories about them, read-only (a
    user id with no name in this chat is 404, as another chat's memory id is)."""
    scope = scope_param(scope)
    current = core()
    detail = await current.console.member(scope, user_id)
    travels = await current.console.travels(scope, user_id)
    return await page(request, current, "person.html", scope=scope, detail=detail, travels=travels)


@router.get("/chats/{scope}/followups", response_class=HTMLResponse)
async def followups(request: Request, scope: str) -> Response:
    """The chat's follow-ups in every state, with what was sent unprompted, read-only."""
    scope = scope_param(scope)
    current = core()
    found = await current.followups.listing(scope)
    asks = await current.followups.asks_unprompted(scope)
    return await page(
        request,
        current,
        "followups.html",
        scope=scope,
        found=found,
        asks=asks,
        state_words=FOLLOWUP_STATE_WORDS,
    )


@router.get("/chats/{scope}/turns", response_class=HTMLResponse)
async def turns(request: Request, scope: str, n: int = 10) -> Response:
    scope = scope_param(scope)
    current = core()
    found = await current.console.turns(scope, max(1, min(n, 100)))
    return await page(request, current, "turns.html", scope=scope, turns=found)


@router.get("/chats/{scope}/archive", response_class=HTMLResponse)
async def archive(
    request: Request, scope: str, day: str = "", q: str = "", before: int | None = None
) -> Response:
    """Messages of one day (default today), or the ones containing `q` (a window of
    messages at a time, older ones through the page's link)."""
    scope = scope_param(scope)
    current = core()
    try:
        chosen = date.fromisoformat(day) if day else None
    except ValueError:
        chosen = None
    found = await current.console.archive_day(scope, chosen, q, before)
    return await page(
        request,
        current,
        "archive.html",
        scope=scope,
        messages=found.messages,
        older=found.older,
        window=found.window,
        day=day,
        q=q,
    )


@router.get("/chats/{scope}/work", response_class=HTMLResponse)
async def work(request: Request, scope: str, note: str = "") -> Response:
    """Consolidation batches, the days x steps grid, and the buttons."""
    scope = scope_param(scope)
    current = core()
    batches, grid, night = await current.console.work(scope)
    days = sorted({r.day for r in grid}, reverse=True)
    cells = {(r.day, r.step): r for r in grid}
    return await page(
        request,
        current,
        "work.html",
        scope=scope,
        batches=batches,
        days=days,
        cells=cells,
        steps=NIGHTLY_STEPS,
        night=night,
        note=note,
    )


@router.post("/chats/{scope}/work/{action}")
async def work_action(
    scope: str, action: str, actor: Authorized, day: Annotated[str, Form()] = ""
) -> Response:
    scope = scope_param(scope)
    console = core().console
    if action == "batch":
        note = await console.run_batch(scope, actor)
    elif action == "night":
        note = await console.run_night(scope, day.strip(), actor)
    elif action == "circuit":
        await console.close_circuit(scope, actor)
        note = "熔断已关闭"
    else:
        raise HTTPException(404)
    return RedirectResponse(f"{PREFIX}/chats/{scope}/work?note={quote(note)}", status_code=303)


@router.get("/settings", response_class=HTMLResponse)
async def settings(request: Request) -> Response:
    current = core()
    rows = await current.console.settings_views()
    return await page(request, current, "settings.html", rows=rows, tunables=TUNABLES)


@router.post("/settings/{name}")
async def set_setting(name: str, actor: Authorized, value: Annotated[str, Form()] = "") -> Response:
    current = core()
    if name not in TUNABLES:
        raise HTTPException(404)
    await current.console.set_tunable(name, value, actor)
    jobs_nightly.follow(current.settings)
    return RedirectResponse(f"{PREFIX}/settings", status_code=303)


@router.post("/settings/{name}/reset")
async def reset_setting(name: str, actor: Authorized) -> Response:
    if name not in TUNABLES:
        raise HTTPException(404)
    current = core()
    await current.console.reset_tunable(name, actor)
    jobs_nightly.follow(current.settings)
    return RedirectResponse(f"{PREFIX}/settings", status_code=303)


@router.get("/audit", response_class=HTMLResponse)
async def audit(request: Request) -> Response:
    current = core()
    return await page(request, current, "audit.html", entries=await current.console.audit())


@router.get("/attachments/{sha256}")
async def attachment(sha256: str) -> Response:
    """An archived image by its content hash (only files the archive stored)."""
    found = await core().archive.stored_file(sha256)
    if found is None:
        raise HTTPException(404)
    return FileResponse(found[0], media_type=found[1], headers=ATTACHMENT_HEADERS)


@router.get("/static/{name}")
async def static(name: str) -> Response:
    if name not in STATIC:
        raise HTTPException(404)
    return FileResponse(HERE / "static" / name, media_type=STATIC[name])


def _filter(request: Request) -> MemoryFilter:
    """The list filters from the query string (unknown values are ignored)."""
    query = request.query_params
    types = tuple(t for t in query.getlist("type") if t in get_args(MemoryType))
    status = query.get("status", "")
    try:
        offset = max(int(query.get("offset", "0")), 0)
    except ValueError:
        offset = 0
    return MemoryFilter(
        types=types,  # pyright: ignore[reportArgumentType]
        status=status if status in get_args(MemoryStatus) else None,  # pyright: ignore[reportArgumentType]
        subject=query.get("subject", "").strip(),
        limit=PAGE_SIZE,
        offset=offset,
    )
