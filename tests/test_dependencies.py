"""Every package the code imports is declared in pyproject.toml, not merely brought
along by another one (fastapi came only through `nonebot2[fastapi]` once)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OWN = {"memory_core", "nonebot_plugin_yuji", "bot"}


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[\[<>=!~;\s]", requirement, maxsplit=1)[0]).lower()


def _imported() -> dict[str, str]:
    """Top-level module -> a file importing it, for every non-stdlib, non-own import."""
    found: dict[str, str] = {}
    files = [
        *(ROOT / "memory_core").rglob("*.py"),
        *(ROOT / "nonebot_plugin_yuji").rglob("*.py"),
        ROOT / "bot.py",
    ]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in OWN and top not in sys.stdlib_module_names:
                    found.setdefault(top, str(path.relative_to(ROOT)))
    return found


def test_every_imported_package_is_a_declared_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {_name(r) for r in project["dependencies"]}
    owners = packages_distributions()
    undeclared = {
        module: where
        for module, where in _imported().items()
        if not declared & {_name(d) for d in owners.get(module, [module])}
    }
    assert undeclared == {}
