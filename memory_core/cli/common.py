"""What every subcommand shares: settings from the environment and `.env`, and the core."""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

from memory_core.service import Yuji
from memory_core.settings import Settings, settings_from_mapping
from memory_core.types import parse_scope


def read_dotenv(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    if not path.is_file():
        return values
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip().strip('"').strip("'")
    return values


def load_settings(env_file: Path = Path(".env")) -> Settings:
    """The CLI is the other entry point, so it reads configuration the way bot.py does:
    `.env` first, the environment winning."""
    values = read_dotenv(env_file)
    values.update({k: v for k, v in os.environ.items() if k.startswith("YUJI_")})
    return settings_from_mapping({k: v for k, v in values.items() if v != ""})


@asynccontextmanager
async def opened_core(settings: Settings | None = None) -> AsyncGenerator[Yuji, None]:
    core = await Yuji.open(settings or load_settings())
    try:
        yield core
    finally:
        await core.close()


def scope_arg(text: str) -> str:
    """argparse type for `--scope`: refuses anything but group:<id> / private:<id>."""
    try:
        return parse_scope(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
