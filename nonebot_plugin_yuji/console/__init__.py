"""The web console at /yuji/ on the bot's own FastAPI app (off until
YUJI_CONSOLE_TOKEN is set: every route answers 404 then)."""

from __future__ import annotations

from fastapi import FastAPI

from . import api, login, pages


def mount(app: FastAPI) -> None:
    for router in (login.router, api.router, pages.router):
        app.include_router(router)
