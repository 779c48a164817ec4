"""Logs: a file under data/logs/ rotated daily (YUJI_LOG_RETENTION_DAYS kept), memory_core's
standard-library loggers bridged into NoneBot's loguru, and secrets masked everywhere.

The file holds every line but NoneBot's per-event ones below WARNING (each message
received, each matcher run): those repeat what the archive holds, keep a person's words
in a file `/forget-me` does not reach, and formatting them was a twentieth of the
process's time in someone else's busy bot (docs/plugin.md). The console still shows
them, as NoneBot configures it.

The LLM key, the Telegram token and the OneBot access token are replaced by `***` in
every loguru line (a global patcher) and in the library loggers that print URLs.
Installed first at start-up, removed at shutdown (after the core closed).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import TYPE_CHECKING

from nonebot import get_driver, logger
from nonebot.log import LoguruHandler

from memory_core import (
    HELD_BACK,
    SECRET_FIELDS,
    SELF_THROTTLED,
    LogThrottle,
    Redactor,
    Settings,
    redact_loggers,
    repeats,
)

if TYPE_CHECKING:
    from loguru import Record

BRIDGED = ("yuji", "memory_core")
FILE_NAME = "yuji_{time:YYYY-MM-DD}.log"
FILE_FORMAT = "{time:YYYY-MM-DD HH:mm:ss.SSS} [{level}] {name} | {message}"
FLOOD_S = 60.0
ERROR_LEVEL = 40
WARNING_LEVEL = 30
PER_EVENT = ("nonebot.message", "nonebot.internal.matcher")
"""Where NoneBot logs each event it receives and each matcher it runs."""

_sink_id: int | None = None


def secrets_of(settings: Settings, extra: Iterable[str] = ()) -> list[str]:
    secrets = [str(getattr(settings, name)) for name in SECRET_FIELDS]
    return [s for s in (*secrets, *extra) if s]


def flood_marker(throttle: LogThrottle) -> Callable[[Record], None]:
    """A patcher step: the same error (ERROR and above, or any record carrying a
    traceback) from the same place (logger, function, line, exception type) goes
    through once per interval, with the count held back since; the rest are marked
    `HELD_BACK`, and every sink's filter drops them."""

    def mark(record: Record) -> None:
        extra = record["extra"]
        if extra.get(SELF_THROTTLED) or (
            record["level"].no < ERROR_LEVEL and record["exception"] is None
        ):
            return
        exception = record["exception"]
        kind = exception.type.__name__ if exception is not None and exception.type else None
        held = throttle.allow((record["name"], record["function"], record["line"], kind))
        if held is None:
            extra[HELD_BACK] = True
        elif held:
            record["message"] += repeats(held)

    return mark


def not_held_back(record: Record) -> bool:
    return not record["extra"].get(HELD_BACK)


def kept_in_file(record: Record) -> bool:
    """The file's filter (loguru asks it before formatting the line)."""
    if record["level"].no < WARNING_LEVEL and (record["name"] or "").startswith(PER_EVENT):
        return False
    return not_held_back(record)


def install(settings: Settings, secrets: Iterable[str]) -> int:
    """Add the file sink, the bridge, the masking and the flood marker; returns the
    loguru sink id."""
    redactor = Redactor(secrets)
    mark_flood = flood_marker(LogThrottle(FLOOD_S))

    def patch(record: Record) -> None:
        if redactor:
            record["message"] = redactor(record["message"])
        mark_flood(record)

    logger.configure(patcher=patch)
    if redactor:
        redact_loggers(redactor.secrets)
    for name in BRIDGED:
        stdlib = logging.getLogger(name)
        if not any(isinstance(h, LoguruHandler) for h in stdlib.handlers):
            stdlib.addHandler(LoguruHandler())
        if stdlib.level == logging.NOTSET:
            stdlib.setLevel(logging.INFO)
    settings.logs_dir.mkdir(parents=True, exist_ok=True)
    return logger.add(
        settings.logs_dir / FILE_NAME,
        rotation="00:00",
        # Old logs go here and nowhere else: the sink knows which files are its own, and
        # prunes them whether or not the nightly runs.
        retention=timedelta(days=settings.log_retention_days),
        encoding="utf-8",
        level="INFO",
        format=FILE_FORMAT,
        filter=kept_in_file,
        backtrace=False,
        diagnose=False,  # variable values in tracebacks could hold secrets
    )


def uninstall(sink_id: int) -> None:
    logger.remove(sink_id)
    for name in BRIDGED:
        stdlib = logging.getLogger(name)
        for handler in [h for h in stdlib.handlers if isinstance(h, LoguruHandler)]:
            stdlib.removeHandler(handler)


driver = get_driver()


def start(settings: Settings) -> None:
    """Called first by the plugin's start-up, so the rest of it is logged to the file."""
    global _sink_id
    access_token = getattr(driver.config, "onebot_access_token", None)
    extra = [access_token] if isinstance(access_token, str) and access_token else []
    _sink_id = install(settings, secrets_of(settings, extra))


@driver.on_shutdown
async def _uninstall() -> None:
    global _sink_id
    if _sink_id is not None:
        uninstall(_sink_id)
        _sink_id = None
