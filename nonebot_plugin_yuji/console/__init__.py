"""The web console at /yuji/ on the bot's own FastAPI app (off until
YUJI_CONSOLE_TOKEN is set: every route answers 404 then)."""

from __future__ import annotations

from fastapi import FastAPI

from . import api, login, pages

MOUNT_PATH = "/yuji/"


def mount(app: FastAPI) -> None:
    for router in (login.router, api.router, pages.router):
        app.include_router(router)


def start_line(*, token_set: bool, served: bool, host: str, port: int) -> str:
    """The one line the start logs about the console, whether it is open or not: a
    newcomer without YUJI_CONSOLE_TOKEN otherwise meets a bare 404 and nothing in the
    log to say why. Pure."""
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}{MOUNT_PATH}"
    if not served:
        return "yuji console: not served: the driver has no FastAPI app (set DRIVER=~fastapi)"
    if not token_set:
        return f"yuji console: off; set YUJI_CONSOLE_TOKEN to open it at {url}"
    return f"yuji console: {url}"
