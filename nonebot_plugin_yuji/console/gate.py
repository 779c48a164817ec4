"""The console's door: every /yuji route except the login form depends on `authorize`.

- Off (404) until `YUJI_CONSOLE_TOKEN` is set.
- `Authorization: Bearer <token>` for scripts (no CSRF: no cookie is involved).
- Otherwise the HttpOnly, SameSite=Strict session cookie set by the login form; a
  request that changes something must carry the session's CSRF token (form field
  `csrf` or header `X-CSRF-Token`).
- A wrong token counts as a failed login for the client address; too many in the
  window and the address is refused (429) until the oldest failure ages out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapi import HTTPException, Request

from memory_core import Actor, LoginThrottle, Session, Sessions, Yuji, csrf_matches
from memory_core import token_matches as token_matches

from .. import runtime  # noqa: TID252 (plugin modules load under two names)

PREFIX = "/yuji"
COOKIE = "yuji_console"
SAFE_METHODS = ("GET", "HEAD")


@dataclass
class Gate:
    core: Yuji
    sessions: Sessions = field(default_factory=Sessions)
    throttle: LoginThrottle = field(default_factory=LoginThrottle)


_gate: Gate | None = None


def gate() -> Gate:
    """The door of the running core (a new core, e.g. after a restart in tests, gets a
    fresh one); 404 while the console is off or the core is not started."""
    global _gate
    core = runtime.started()
    if core is None:
        raise HTTPException(404)
    if not core.settings.console_token:
        raise HTTPException(404, "控制台未开启（设置 YUJI_CONSOLE_TOKEN）")
    if _gate is None or _gate.core is not core:
        _gate = Gate(core)
    return _gate


def address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def refuse_if_throttled(door: Gate, where: str) -> None:
    wait = door.throttle.blocked_for(where)
    if wait > 0:
        raise HTTPException(
            429,
            f"登录失败次数过多，请 {int(wait) + 1} 秒后再试",
            {"Retry-After": str(int(wait) + 1)},
        )


async def authorize(request: Request) -> Actor:
    door = gate()
    where = address(request)
    header = request.headers.get("authorization")
    if header is not None:
        refuse_if_throttled(door, where)
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token_matches(
            token.strip(), door.core.settings.console_token
        ):
            door.throttle.failed(where)
            raise HTTPException(401, "令牌不对", {"WWW-Authenticate": "Bearer"})
        return Actor(where, "bearer")
    session = door.sessions.get(request.cookies.get(COOKIE, ""))
    if session is None:
        wants_page = request.method in SAFE_METHODS and not request.url.path.startswith(
            f"{PREFIX}/api/"
        )
        if wants_page:
            raise HTTPException(303, "请先登录", {"Location": f"{PREFIX}/login"})
        raise HTTPException(401, "请先登录", {"WWW-Authenticate": "Bearer"})
    if request.method not in SAFE_METHODS:
        await _check_csrf(request, session)
    request.state.csrf = session.csrf
    return Actor(where, "session")


async def _check_csrf(request: Request, session: Session) -> None:
    given = request.headers.get("x-csrf-token", "")
    if not given and "form" in request.headers.get("content-type", ""):
        value = (await request.form()).get("csrf", "")
        given = value if isinstance(value, str) else ""
    if not csrf_matches(session, given):
        raise HTTPException(403, "CSRF 校验失败：请刷新页面后重试")
