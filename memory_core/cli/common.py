"""What every subcommand shares: settings from the environment, `.env` and the command
line, and the core."""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

from memory_core.service import Yuji
from memory_core.settings import Settings, configured_values, settings_from_mapping
from memory_core.types import parse_scope

_given: dict[str, str] = {}
"""`YUJI_*` values given on the command line (`yuji --data-dir DIR`) for this run."""


def give(values: Mapping[str, str]) -> None:
    """Settings from the command line, replacing any given before (`main` calls it on
    every run, so one run's `--data-dir` never reaches the next in the same process)."""
    _given.clear()
    _given.update(values)


def configured(cwd: Path = Path()) -> dict[str, str]:
    """The CLI is the other entry point, so it reads configuration exactly as bot.py
    does (`configured_values`); a value given on the command line wins over all of it,
    the way the environment wins over `.env`, so `--data-dir DIR` is YUJI_DATA_DIR=DIR."""
    return {**configured_values(os.environ, cwd), **_given}


def load_settings(cwd: Path = Path()) -> Settings:
    return settings_from_mapping(configured(cwd))


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
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"不是聊天 id：{text!r}（应为 group:<群号>、private:<QQ 号>，"
            "或带平台的 <平台>-group:<号> / <平台>-private:<号>）"
        ) from None
