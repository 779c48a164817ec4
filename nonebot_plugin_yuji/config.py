"""The plugin's configuration: `memory_core.Settings` itself.

NoneBot fills it from `nonebot.init` keywords: bot.py hands over every setting as it
read and validated them (`memory_core.settings.configured_values`, as the CLI does).
Each field is read from its `yuji_*` key, so a setting is declared, documented and
validated once, in memory_core's settings model. `to_settings` adds NoneBot's NICKNAME.
"""

from __future__ import annotations

from collections.abc import Mapping

from nonebot import get_plugin_config
from pydantic import AliasGenerator, ConfigDict, ValidationError

from memory_core import Origin, Settings, YujiError

STANDALONE = "yuji_standalone"
"""The NoneBot setting `bot.py` passes: this process is yuji's own bot, so a start-up
that fails stops it (in someone else's bot it leaves the plugin inactive)."""


def _nonebot_key(name: str) -> str:
    return f"yuji_{name}"


class Config(Settings):
    """Every core setting, read only from its `yuji_*` key (NoneBot's config also holds
    every environment variable: a bare `DATA_DIR` must not set `data_dir`)."""

    model_config = ConfigDict(
        alias_generator=AliasGenerator(validation_alias=_nonebot_key), validate_by_name=False
    )


def to_settings(config: Settings, nicknames: set[str] | None = None) -> Settings:
    values = dict(config)
    if nicknames:
        values["nicknames"] = tuple(sorted(nicknames))
    return Settings(**values)


def origins(settings: Settings, environ: Mapping[str, str]) -> dict[str, Origin]:
    """Where each setting's value comes from, for the console: an environment variable
    wins; a value other than the default came from `.env`; else the default."""
    defaults = Settings()
    found: dict[str, Origin] = {}
    for name in Settings.model_fields:
        if f"YUJI_{name.upper()}" in environ:
            found[name] = "environment"
        elif getattr(settings, name) != getattr(defaults, name):
            found[name] = ".env"
        else:
            found[name] = "default"
    return found


def matcher_settings() -> Settings:
    """The settings as NoneBot holds them when the plugin is imported, for its matchers'
    priorities and blocking; the defaults when they do not validate (the start-up then
    says why in one line, and the plugin stays inactive)."""
    try:
        return get_plugin_config(Config)
    except (ValidationError, YujiError):
        return Settings()


def one_line(exc: BaseException) -> str:
    """What went wrong, in one line: a settings error names each field and its problem."""
    if isinstance(exc, ValidationError):
        return "invalid settings: " + "; ".join(
            f"{_variable(e['loc'])}: {e['msg']}" for e in exc.errors()
        )
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if not isinstance(exc, YujiError) else text


def _variable(loc: tuple[int | str, ...]) -> str:
    name = str(loc[0]) if loc else "settings"
    return (name if name.startswith("yuji_") else f"yuji_{name}").upper()
