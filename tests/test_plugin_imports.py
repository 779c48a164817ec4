"""The plugin package (nonebot_plugin_yuji/) imports memory_core's public names only: a ruff banned-api rule says so.

The rule lives in nonebot_plugin_yuji/ruff.toml (ruff scopes banned-api per folder only through a
nested config); these tests keep its list equal to memory_core's submodules, prove
the rule fires on a reach past the API, and that the tree passes it.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "memory_core"


def _ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "TID251", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )


def test_every_submodule_of_memory_core_is_banned_in_the_plugin() -> None:
    config = tomllib.loads((ROOT / "nonebot_plugin_yuji" / "ruff.toml").read_text(encoding="utf-8"))
    banned = set(config["lint"]["flake8-tidy-imports"]["banned-api"])
    submodules = {
        f"memory_core.{path.stem}"
        for path in CORE.iterdir()
        if not path.name.startswith("_")
        and (path.suffix == ".py" or (path / "__init__.py").is_file())
    }
    assert banned == submodules | {"nonebot.internal"}


def test_the_rule_refuses_a_reach_past_the_public_api() -> None:
    probe = (
        "from memory_core import Settings\n"
        "from memory_core.chat.texts import error_text\n"
        "from nonebot.internal.matcher import Matcher\n"
    )
    found = _ruff("--stdin-filename", "nonebot_plugin_yuji/probe.py", "-", stdin=probe)
    assert found.returncode == 1
    assert "`memory_core.chat` is banned" in found.stdout
    assert "`nonebot.internal` is banned" in found.stdout
    assert "memory_core` is banned" not in found.stdout  # the public API itself is fine


def test_the_plugin_passes_the_rule() -> None:
    found = _ruff("nonebot_plugin_yuji")
    assert found.returncode == 0, found.stdout + found.stderr
