"""The login form (the only /yuji route without `authorize`) and logout."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse

from memory_core import Actor, Yuji

from .gate import COOKIE, PREFIX, address, authorize, gate, refuse_if_throttled, token_matches
from .web import templates

router = APIRouter(prefix=PREFIX)


@router.get("/login", response_class=HTMLResponse)
async def login_form(request: Request) -> Response:
    door = gate()  # 404 while the console is off
    return templates.TemplateResponse(request, "login.html", _context(door.core, ""))


@router.post("/login", response_class=HTMLResponse)
async def login(request: Request, token: Annotated[str, Form()] = "") -> Response:
    door = gate()
    where = address(request)
    refuse_if_throttled(door, where)
    if not token_matches(token.strip(), door.core.settings.console_token):
        door.throttle.failed(where)
        return templates.TemplateResponse(
            request, "login.html", _context(door.core, "令牌不对"), status_code=401
        )
    session = door.sessions.open()
    response = RedirectResponse(f"{PREFIX}/", status_code=303)
    response.set_cookie(
        COOKIE, session.id, httponly=True, samesite="strict", path=PREFIX, max_age=12 * 3600
    )
    return response


def _context(core: Yuji, error: str) -> dict[str, object]:
    """The form says where the token comes from: `yuji demo`'s terminal for the sample
    world, else the setting."""
    return {"error": error, "demo": bool(core.console.sample_label)}


@router.post("/logout")
async def logout(request: Request, _actor: Annotated[Actor, Depends(authorize)]) -> Response:
    gate().sessions.close(request.cookies.get(COOKIE, ""))
    response = RedirectResponse(f"{PREFIX}/login", status_code=303)
    response.delete_cookie(COOKIE, path=PREFIX)
    return response
