"""Shared pieces of the console's routes: the error-translating route class, the
templates with their Chinese filters, and the scope path parameter."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from fastapi import HTTPException, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates

from memory_core import (
    BAND_WORDS,
    NotFound,
    ScopeViolation,
    ValidationError,
    Yuji,
    band_of,
    bar_heights,
    human_bytes,
    lag_text,
    parse_scope,
    platform_name,
)

from .format import (
    NAME_SOURCE_LABELS,
    ORIGIN_LABELS,
    OUTCOME_LABELS,
    REASON_LABELS,
    ROLE_LABELS,
    STAGE_LABELS,
    STATE_LABELS,
    STATUS_LABELS,
    STEP_LABELS,
    TYPE_LABELS,
    WORD_LABELS,
    WORD_TITLES,
    local_time,
    percent,
    reason_words,
    vectors_label,
    zone_label,
)

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=HERE / "templates")


class ConsoleRoute(APIRoute):
    """Turns the core's refusals into answers: an unknown id (or one of another chat)
    is 404, input the core refuses is 400 with its reason. Pages get a page, the JSON
    API gets `{"detail": ...}`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except (NotFound, ScopeViolation):
                return refusal(request, 404, "找不到")
            except ValidationError as exc:
                return refusal(request, 400, str(exc))

        return guarded


def refusal(request: Request, status: int, text: str) -> Response:
    if request.url.path.startswith("/yuji/api/"):
        return JSONResponse({"detail": text}, status_code=status)
    return HTMLResponse(
        templates.get_template("error.html").render(status=status, text=text),
        status_code=status,
    )


def scope_param(scope: str) -> str:
    try:
        return parse_scope(scope)
    except ValueError:
        raise HTTPException(404, "没有这个聊天") from None


async def page(request: Request, core: Yuji, name: str, **context: Any) -> HTMLResponse:
    """A page of the console; a chat's page gets the chat's name (`chat_name`) too."""
    zone = ZoneInfo(core.settings.timezone)
    scope = context.get("scope")
    chat_name = await core.console.chat_name(scope) if isinstance(scope, str) else ""

    def when(instant: datetime | None) -> str:
        return local_time(instant, zone)

    return templates.TemplateResponse(
        request,
        name,
        {
            "csrf": getattr(request.state, "csrf", ""),
            "when": when,
            "bytes": human_bytes,
            "percent": percent,
            "lag": lag_text,
            "heights": bar_heights,
            "sample_label": core.console.sample_label,
            "zone_label": zone_label(zone, core.clock.now()),
            "stage_labels": STAGE_LABELS,
            "band_of": band_of,
            "band_words": BAND_WORDS,
            "type_labels": TYPE_LABELS,
            "status_labels": STATUS_LABELS,
            "word_labels": WORD_LABELS,
            "word_titles": WORD_TITLES,
            "name_sources": NAME_SOURCE_LABELS,
            "chat_name": chat_name,
            "platform_of": platform_name,
            "states": STATE_LABELS,
            "outcomes": OUTCOME_LABELS,
            "step_labels": STEP_LABELS,
            "origins": ORIGIN_LABELS,
            "roles": ROLE_LABELS,
            "reasons": REASON_LABELS,
            "reason_words": reason_words,
            "vectors_label": vectors_label,
            **context,
        },
    )
