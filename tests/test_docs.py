"""Every setting is documented in .env.example; every command in the README."""

from __future__ import annotations

import re
from pathlib import Path

from memory_core import Settings

ROOT = Path(__file__).resolve().parents[1]


def test_every_setting_is_in_env_example() -> None:
    documented = set(
        re.findall(r"^(YUJI_[A-Z0-9_]+)=", (ROOT / ".env.example").read_text("utf-8"), re.M)
    )
    expected = {f"YUJI_{name.upper()}" for name in Settings.model_fields}
    assert expected - documented == set()
    assert documented - expected == set()


def test_env_example_values_are_the_defaults() -> None:
    from memory_core.settings import settings_from_mapping

    text = (ROOT / ".env.example").read_text("utf-8")
    values = dict(re.findall(r"^(YUJI_[A-Z0-9_]+)=(.*)$", text, re.M))
    # Empty values mean "unset"; the rest must parse to exactly the shipped defaults.
    assert settings_from_mapping({k: v for k, v in values.items() if v}) == Settings()


def test_every_cli_subcommand_is_in_the_readme() -> None:
    from memory_core.cli import SUBCOMMANDS

    readme = (ROOT / "README.md").read_text("utf-8")
    missing = [name for name in SUBCOMMANDS if f"`yuji {name}" not in readme]
    assert missing == []


def test_every_chat_command_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    sources = "\n".join(p.read_text("utf-8") for p in (ROOT / "plugins").rglob("*.py"))
    commands = set(re.findall(r"on_command\(\s*[\"']([^\"']+)[\"']", sources))
    assert commands, "no chat commands found: did the plugin layout change?"
    missing = sorted(c for c in commands if f"`/{c}" not in readme)
    assert missing == []


def test_env_example_is_written_from_the_settings_model() -> None:
    from memory_core.cli.env_example import render

    assert (ROOT / ".env.example").read_text("utf-8") == render(), (
        "run `yuji env-example --write .env.example` after changing memory_core/settings.py"
    )
