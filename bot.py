"""Start the bot: `python bot.py` (after `pip install -e .`).

The settings are read and validated here, before NoneBot starts, the way the CLI
reads them (`memory_core.settings.configured_values`: `.env`, `.env.<ENVIRONMENT>`,
the environment), and handed to `nonebot.init` whole: NoneBot's own reading of `.env`
JSON-decodes values and lets the environment override only keys a file names, so it
never decides a yuji setting. A setting, HOST/PORT or data folder the bot cannot run
with is one line and exit 2, as in the CLI; so is a second bot on the same folder.
Every `ONEBOT_*` variable is handed over too, so it wins over any file.

Secrets are masked in every log line before `nonebot.init` (which logs its whole
configuration at DEBUG), so no level ever shows the OneBot token, the LLM key or the
Telegram token.

The OneBot v11 adapter registered is yuji's `IngestAdapter` (the stock one with a
receive loop that archives first, skips malformed frames and applies backpressure),
or NoneBot's own with `YUJI_ONEBOT_ADAPTER=stock`; it is imported after the plugin is
loaded because it lives in the plugin.

SIGINT and SIGTERM stop the server gracefully (uvicorn stops accepting, the
plugin's shutdown drains the archive); afterwards uvicorn re-raises the signal it
caught, which would kill the process by it (exit -15). `main` installs a handler that
swallows that replay, so a drained shutdown exits with status 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import sys
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

import nonebot
import pydantic
import pydantic_core
from nonebot.config import Config, Env
from nonebot.log import default_filter, default_format, logger
from nonebot.log import logger_id as console_handler_id

from memory_core import check_store
from memory_core.errors import ConfigError, YujiError
from memory_core.log_throttle import HELD_BACK
from memory_core.ops import Redactor
from memory_core.ops.data_dir import claimed, ensure_usable
from memory_core.service import check_models
from memory_core.settings import (
    SECRET_FIELDS,
    Settings,
    configuration_sources,
    configured_values,
    misspelled_settings,
    nearest_name,
    settings_from_mapping,
)

if TYPE_CHECKING:
    from loguru import Record

SECRET_KEYS = ("ONEBOT_ACCESS_TOKEN", *(f"YUJI_{name.upper()}" for name in SECRET_FIELDS))


def configured_secrets(environ: Mapping[str, str] = os.environ, cwd: Path = Path()) -> list[str]:
    """The secrets of every source the settings are read from (a later source wins, but
    every value is masked either way)."""
    found: list[str] = []
    for source in configuration_sources(environ, cwd):
        upper = {key.upper(): value for key, value in source.items()}
        found += [v for k in SECRET_KEYS if (v := upper.get(k))]
    return found


def fail(line: str) -> NoReturn:
    """One line the operator can act on instead of a traceback; exit 2, as the CLI."""
    print(f"bot.py: {line}", file=sys.stderr)
    raise SystemExit(2)


def read_settings(environ: Mapping[str, str] = os.environ, cwd: Path = Path()) -> Settings:
    values = configured_values(environ, cwd)
    for line in misspelled_settings(values):
        logger.warning(line)
    try:
        return settings_from_mapping(values)
    except ConfigError as exc:
        fail(str(exc))


def nonebot_keywords(settings: Settings, environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """Every yuji setting as validated here, and the `ONEBOT_*` variables."""
    keywords: dict[str, Any] = {f"yuji_{name}": value for name, value in settings}
    keywords["yuji_standalone"] = True  # the plugin's start-up failing stops this bot
    keywords |= {
        k.lower(): _env_value(v)
        for k, v in environ.items()
        if k.upper().startswith(("ONEBOT_", "TELEGRAM_"))
    }
    return keywords


def _env_value(value: str) -> Any:
    """A list or an object decoded, as NoneBot reads `.env` (`TELEGRAM_BOTS` is a list);
    anything else, a token of digits too, stays the string it is."""
    if value.lstrip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def nonebot_config(keywords: Mapping[str, Any]) -> Config:
    """NoneBot's own settings (HOST, PORT, ...) as `nonebot.init` will read them (its
    `Config` over `.env` and `.env.<ENVIRONMENT>`), a refusal in one line: checked
    before `init`, which logs before it reads."""
    try:
        env = Env()
        return Config(**keywords, _env_file=(".env", f".env.{env.environment}"))
    except pydantic.ValidationError as exc:
        fail("invalid settings: " + "; ".join(_nonebot_problem(e) for e in exc.errors()))


def init_nonebot(keywords: Mapping[str, Any]) -> None:
    nonebot_config(keywords)
    nonebot.init(**keywords)


def nonebot_names() -> frozenset[str]:
    """Every setting name NoneBot, its driver and the OneBot adapter read, upper-cased."""
    from nonebot.adapters.onebot.v11.config import Config as AdapterConfig
    from nonebot.drivers.fastapi import Config as DriverConfig

    models = (Config, Env, AdapterConfig, DriverConfig)
    return frozenset(name.upper() for model in models for name in model.model_fields)


def misspelled_nonebot_settings(names: list[str]) -> list[str]:
    """One warning per name (of `.env`, `.env.<ENVIRONMENT>` or the environment) that
    is a slip of a NoneBot setting: NoneBot keeps any name as an extra and never says
    that `NICKNAMES` left `NICKNAME` at its default."""
    known = nonebot_names()
    warnings: list[str] = []
    for name in sorted({n.upper() for n in names}):
        if name.startswith("YUJI_") or not _SETTING_NAME.fullmatch(name):
            continue  # yuji's own are checked by `misspelled_settings`
        close = nearest_name(name, known)
        if close is not None:
            warnings.append(
                f"{name} is not a NoneBot setting and is ignored; did you mean {close}?"
            )
    return warnings


_SETTING_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def port_problem(host: str, port: int) -> str | None:
    """The line refusing a HOST:PORT the server could not listen on (held by another
    program, a privileged port, an address not on this machine), or None: checked by
    binding it the way uvicorn will, before anything is started or made."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return f"HOST {host}: not an address of this machine ({exc.strerror}); set HOST"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (
                    f"PORT {port} on {host} is in use by another program: stop it, or set "
                    "PORT to a free port (and the same in the QQ client's reverse WebSocket URL)"
                )
            return f"cannot listen on {host}:{port} ({exc.strerror}): set HOST and PORT"
    return None


def _nonebot_problem(error: pydantic_core.ErrorDetails) -> str:
    name = str(error["loc"][0]).upper() if error["loc"] else "settings"
    return f"{name}: {error['msg']}"


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


def check_exposure(config: Config, allow_open: bool) -> str | None:
    """One line and exit 2 on a non-loopback HOST without a token; the warning about an
    empty token otherwise, for the caller to print once the start is sure."""
    verdict = exposure(
        str(config.host), config.port, getattr(config, "onebot_access_token", None), allow_open
    )
    if verdict is None:
        return None
    level, line = verdict
    if level == "refuse":
        fail(line)
    return line


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
    settings = read_settings()
    sources = configuration_sources(os.environ, Path())
    for line in misspelled_nonebot_settings([k for source in sources for k in source]):
        logger.warning(line)  # a typo is worth a line even when the start is refused
    keywords = nonebot_keywords(settings)
    config = nonebot_config(keywords)
    exposed = check_exposure(config, settings.allow_unauthenticated_onebot)
    problem = port_problem(str(config.host), config.port)
    if problem is not None:
        fail(problem)
    try:
        asyncio.run(check_store(settings))
    except YujiError as exc:
        fail(str(exc))
    if exposed:  # after the start checks: a refused start is its one line
        logger.warning(exposed)
    made = first_missing(settings.data_dir)
    try:
        ensure_usable(settings.data_dir)
        check_models(settings)  # recall models without a calibration: one line, exit 2
        with claimed(settings.data_dir):
            serve(keywords, settings.onebot_adapter)
    except ConfigError as exc:
        remove_made(made)
        fail(str(exc))
    except SystemExit as exc:  # uvicorn's exit when the start-up failed (status 3)
        if exc.code not in (0, None) and not _started.is_set():
            remove_made(made)
        raise


class _Started:
    """Whether every start-up hook ran (the core opened): a start that failed before
    that made nothing worth keeping in a folder it made."""

    def __init__(self) -> None:
        self._set = False

    def is_set(self) -> bool:
        return self._set

    async def hook(self) -> None:
        self._set = True


_started = _Started()


def first_missing(path: Path) -> Path | None:
    """The outermost folder of `path` that does not exist yet (what a start would make)."""
    missing: Path | None = None
    for folder in (path.absolute(), *path.absolute().parents):
        if folder.exists():
            break
        missing = folder
    return missing


def remove_made(made: Path | None) -> None:
    """A refused start leaves nothing: remove the folder it made (nothing else)."""
    if made is not None:
        with contextlib.suppress(OSError):
            shutil.rmtree(made)


def serve(keywords: Mapping[str, Any], onebot_adapter: str) -> None:
    # NoneBot's own defaults (driver ~fastapi, 127.0.0.1:8080) apply unless set.
    init_nonebot(keywords)
    nonebot.load_plugin("nonebot_plugin_yuji")
    if onebot_adapter == "ingest":
        from nonebot_plugin_yuji.onebot_adapter import IngestAdapter

        nonebot.get_driver().register_adapter(IngestAdapter)
    else:
        from nonebot.adapters.onebot.v11 import Adapter

        nonebot.get_driver().register_adapter(Adapter)
    if getattr(nonebot.get_driver().config, "telegram_bots", None):
        from nonebot.adapters.telegram import Adapter as TelegramAdapter

        nonebot.get_driver().register_adapter(TelegramAdapter)  # needs DRIVER=~fastapi+~httpx
    nonebot.get_driver().on_startup(freeze_startup_heap)  # after the plugin's start-up
    nonebot.get_driver().on_startup(_started.hook)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _replayed_signal)
    nonebot.run()


if __name__ == "__main__":
    main()
