"""What every subcommand shares: settings from the environment and `.env`, and the core."""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

from memory_core.service import Yuji
from memory_core.settings import Settings, configured_values, settings_from_mapping
from memory_core.types import parse_scope


def load_settings(cwd: Path = Path()) -> Settings:
    """The CLI is the other entry point, so it reads configuration exactly as bot.py
    does (`configured_values`)."""
    return settings_from_mapping(configured_values(os.environ, cwd))


@asynccontextmanager
async def opened_core(
    settings: Settings | None = None, *, existing: bool = False
) -> AsyncGenerator[Yuji, None]:
    """The core of the configured store. `existing`: the command only reads, so a
    store that is not there is one line ("no yuji store at ...") and nothing is made."""
    core = await Yuji.open(settings or load_settings(), existing=existing)
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
