"""The plugin's configuration: every core setting as a `yuji_*` field.

The fields are generated from `memory_core.Settings`, so a setting is declared once;
NoneBot fills them from `.env` / `nonebot.init` keywords (bot.py passes every
`YUJI_*` environment variable), and `to_settings` hands the core a frozen object.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model, field_validator

from memory_core import Origin, Settings


def _field_definitions() -> dict[str, Any]:
    hints = typing.get_type_hints(Settings)
    definitions: dict[str, Any] = {}
    for f in fields(Settings):
        default = f.default if f.default is not MISSING else None
        definitions[f"yuji_{f.name}"] = (hints[f.name], default)
    return definitions


class _Base(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _split_lists(cls, value: Any, info: Any) -> Any:
        # Environment variables arrive as strings: "a,b" or a JSON list for tuples.
        default = Settings.__dataclass_fields__.get(info.field_name.removeprefix("yuji_"))
        if isinstance(value, str) and default is not None and isinstance(default.default, tuple):
            from memory_core import settings_from_mapping

            return getattr(settings_from_mapping({info.field_name: value}), default.name)
        return value


Config = create_model("Config", __base__=_Base, **_field_definitions())


def to_settings(config: BaseModel, nicknames: set[str] | None = None) -> Settings:
    values = {name.removeprefix("yuji_"): value for name, value in config.model_dump().items()}
    values["data_dir"] = Path(values["data_dir"])
    if nicknames:
        values["nicknames"] = tuple(sorted(nicknames))
    return Settings(**values)


def origins(settings: Settings, environ: Mapping[str, str]) -> dict[str, Origin]:
    """Where each setting's value comes from, for the console: an environment variable
    wins; a value other than the default came from `.env`; else the default."""
    defaults = Settings()
    found: dict[str, Origin] = {}
    for f in fields(Settings):
        if f"YUJI_{f.name.upper()}" in environ:
            found[f.name] = "environment"
        elif getattr(settings, f.name) != getattr(defaults, f.name):
            found[f.name] = ".env"
        else:
            found[f.name] = "default"
    return found
