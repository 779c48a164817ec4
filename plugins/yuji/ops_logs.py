"""Logs: a file under data/logs/ rotated daily (YUJI_LOG_RETENTION_DAYS kept), memory_core's
standard-library loggers bridged into NoneBot's loguru, and secrets masked everywhere.

The LLM key, the Telegram token and the OneBot access token are replaced by `***` in
every loguru line (a global patcher) and in the library loggers that print URLs.
Installed first at start-up, removed at shutdown (after the core closed).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from nonebot import get_driver, logger
from nonebot.log import LoguruHandler

from memory_core import Settings
from memory_core.ops import Redactor
from memory_core.ops.redact import redact_loggers

if TYPE_CHECKING:
    from loguru import Record

BRIDGED = ("yuji", "memory_core")
FILE_NAME = "yuji_{time:YYYY-MM-DD}.log"
FILE_FORMAT = "{time:YYYY-MM-DD HH:mm:ss.SSS} [{level}] {name} | {message}"

_sink_id: int | None = None


def secrets_of(settings: Settings, extra: Iterable[str] = ()) -> list[str]:
    secrets = (settings.llm_api_key, settings.telegram_bot_token, settings.console_token)
    return [s for s in (*secrets, *extra) if s]


def install(settings: Settings, secrets: Iterable[str]) -> int:
    """Add the file sink, the bridge and the masking; returns the loguru sink id."""
    redactor = Redactor(secrets)
    if redactor:

        def mask(record: Record) -> None:
            record["message"] = redactor(record["message"])

        logger.configure(patcher=mask)
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
        retention=max(1, settings.log_retention_days),
        encoding="utf-8",
        level="INFO",
        format=FILE_FORMAT,
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
