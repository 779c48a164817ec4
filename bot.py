"""Start the bot: `python bot.py` (after `pip install -e .`).

NoneBot reads `.env`, but lets an environment variable override only the keys that
file names. Operators deploy with plain environment variables (systemd, Docker), so
every `YUJI_*` and `ONEBOT_*` variable is handed to `nonebot.init` explicitly, where
it wins over any file.

Secrets are masked in every log line before `nonebot.init` (which logs its whole
configuration at DEBUG), so no level ever shows the OneBot token, the LLM key or the
Telegram token.

The OneBot v11 adapter registered is yuji's `IngestAdapter` (the stock one with a
receive loop that archives first, skips malformed frames and applies backpressure);
it is imported after the plugins are loaded because it lives in the plugin.

SIGINT and SIGTERM stop the server gracefully (uvicorn stops accepting, the
plugin's shutdown drains the archive); afterwards uvicorn re-raises the signal it
caught, which would kill the process by it (exit -15). `main` installs a handler that
swallows that replay, so a drained shutdown exits with status 0.
"""

from __future__ import annotations

import gc
import ipaddress
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import nonebot
from dotenv import dotenv_values
from nonebot.log import default_filter, default_format, logger
from nonebot.log import logger_id as console_handler_id

from memory_core.log_throttle import HELD_BACK
from memory_core.ops import Redactor
from memory_core.settings import SECRET_FIELDS, parse_bool

if TYPE_CHECKING:
    from loguru import Record

ENV_PREFIXES = ("YUJI_", "ONEBOT_")
SECRET_KEYS = ("ONEBOT_ACCESS_TOKEN", *(f"YUJI_{name.upper()}" for name in SECRET_FIELDS))


def env_overrides(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    return {
        key.lower(): value for key, value in environ.items() if key.upper().startswith(ENV_PREFIXES)
    }


def configured_secrets(environ: Mapping[str, str] = os.environ, cwd: Path = Path()) -> list[str]:
    """The secrets as NoneBot will read them: `.env`, then `.env.<ENVIRONMENT>`, then the
    environment (each later source wins; every value is masked either way)."""
    sources: list[Mapping[str, str | None]] = [dotenv_values(cwd / ".env")]
    environment = environ.get("ENVIRONMENT") or sources[0].get("ENVIRONMENT") or "prod"
    sources += [dotenv_values(cwd / f".env.{environment}"), environ]
    found: list[str] = []
    for source in sources:
        upper = {key.upper(): value for key, value in source.items()}
        found += [v for k in SECRET_KEYS if (v := upper.get(k))]
    return found


def mask_secrets(secrets: list[str]) -> None:
    """Mask `secrets` in every line NoneBot's console handler writes, from before
    `nonebot.init` on, and drop the repeats the plugin's flood marker holds back. (A loguru patcher would not do: `init` replaces the patcher
    with its own before it logs the configuration; the plugin adds its masking patcher
    for every sink at start-up.)"""
    redactor = Redactor(secrets)

    def masked(record: Record) -> bool:
        if record["extra"].get(HELD_BACK):
            return False  # a repeat the plugin's flood marker held back
        if redactor:
            record["message"] = redactor(record["message"])
        return default_filter(record)

    logger.remove(console_handler_id)
    logger.add(sys.stdout, level=0, diagnose=False, filter=masked, format=default_format)


def exposure(host: str, port: int, token: object, allow_open: bool) -> tuple[str, str] | None:
    """Pure: (level, line) to log for an empty access token, or None when one is set.

    Level "refuse" means do not start: anyone reaching a non-loopback address could
    inject messages as the QQ client."""
    if token is not None and str(token) != "":
        return None
    if not _is_loopback(host) and not allow_open:
        return "refuse", (
            f"refusing to listen on {host} without ONEBOT_ACCESS_TOKEN: anyone who can reach "
            f"port {port} could send messages as the QQ client. Set the same token here and in "
            "the client, or YUJI_ALLOW_UNAUTHENTICATED_ONEBOT=true to accept anyone"
        )
    return "warn", (
        f"ONEBOT_ACCESS_TOKEN is empty: anyone who can reach {host}:{port} can send "
        "messages as the QQ client; set the same token here and in the client"
    )


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def check_exposure() -> None:
    """Warn about an empty token; exit 2 on a non-loopback HOST without one."""
    config = nonebot.get_driver().config
    verdict = exposure(
        str(config.host),
        config.port,
        getattr(config, "onebot_access_token", None),
        parse_bool(getattr(config, "yuji_allow_unauthenticated_onebot", False)),
    )
    if verdict is None:
        return
    level, line = verdict
    if level == "refuse":
        logger.error(line)
        raise SystemExit(2)
    logger.warning(line)


def _replayed_signal(_signum: int, _frame: FrameType | None) -> None:
    """uvicorn handled the signal already (graceful shutdown); ignore its replay."""


async def freeze_startup_heap() -> None:
    """Once everything has started (modules, settings, the core and its models), move
    those objects out of the cyclic collector's sight: they live as long as the
    process, and a full collection walking them all stopped the event loop for 0.2-0.3
    s at 100k messages (benchmarks/console_render.py); afterwards it walks only what
    was made since."""
    gc.collect()
    gc.freeze()


def main() -> None:
    mask_secrets(configured_secrets())
    # NoneBot's own defaults (driver ~fastapi, 127.0.0.1:8080) apply unless set.
    nonebot.init(**env_overrides())
    check_exposure()
    nonebot.load_plugins("plugins")
    from plugins.yuji.onebot_adapter import IngestAdapter

    nonebot.get_driver().register_adapter(IngestAdapter)
    nonebot.get_driver().on_startup(freeze_startup_heap)  # after the plugin's start-up
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _replayed_signal)
    nonebot.run()


if __name__ == "__main__":
    main()
