"""Every setting is documented in .env.example; every command in the README."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from memory_core import Settings

ROOT = Path(__file__).resolve().parents[1]


def test_every_setting_is_in_env_example() -> None:
    documented = set(
        re.findall(r"^(YUJI_[A-Z0-9_]+)=", (ROOT / ".env.example").read_text("utf-8"), re.M)
    )
    expected = {f"YUJI_{f.name.upper()}" for f in fields(Settings)}
    assert expected - documented == set()
    assert documented - expected == set()


def test_env_example_values_are_the_defaults() -> None:
    from memory_core.settings import settings_from_mapping

    text = (ROOT / ".env.example").read_text("utf-8")
    values = dict(re.findall(r"^(YUJI_[A-Z0-9_]+)=(.*)$", text, re.M))
    # Empty values mean "unset"; the rest must parse to exactly the shipped defaults.
    assert settings_from_mapping({k: v for k, v in values.items() if v}) == Settings()
