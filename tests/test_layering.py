"""The layers are a test (docs/design.md#layers).

memory_core is a library of its own: it never imports nonebot or the plugin (nonebot_plugin_yuji). Inside
it, every import (module level, in functions, under TYPE_CHECKING) goes down or
sideways in the layer map below, never up, and the packages import each other
without cycles.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from functools import cache
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "memory_core"

LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("base", frozenset({"types", "errors", "clock", "settings", "tokenize", "log_throttle"})),
    ("storage", frozenset({"storage"})),
    (
        "domain",
        frozenset(
            {
                "archive",
                "chat",
                "console",
                "consolidation",
                "deployment",
                "followups",
                "llm",
                "memories",
                "nightly",
                "ops",
                "people",
                "porting",
                "prompts",
                "providers",
                "recall",
                "vectors",
                "vision",
            }
        ),
    ),
    ("services", frozenset({"service", "__init__"})),
    ("cli/eval", frozenset({"cli", "eval"})),
)
"""Lowest first. A part is a top-level module or package of memory_core; `__init__`
is the curated public API. The plugin (nonebot_plugin_yuji) sits above all of these."""

RANK = {part: rank for rank, (_, parts) in enumerate(LAYERS) for part in parts}


def _module(path: Path) -> str:
    parts = list(path.relative_to(CORE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _part(module: str) -> str:
    """The top-level part of memory_core a dotted module name belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


@cache
def imports() -> tuple[tuple[str, int, str], ...]:
    """(file, line, imported module) for every import statement in memory_core."""
    return tuple(_imports())


def _imports() -> Iterator[tuple[str, int, str]]:
    for path in sorted(CORE.rglob("*.py")):
        module = _module(path)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = str(path.relative_to(CORE.parent))
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield where, node.lineno, alias.name
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                yield where, node.lineno, target


def _core_edges() -> Iterator[tuple[str, int, str, str, str]]:
    """(file, line, imported module, importing part, imported part) inside memory_core."""
    for where, line, target in imports():
        if target == "memory_core" or target.startswith("memory_core."):
            source = _part(_module(CORE.parent / where))
            yield where, line, target, source, _part(target)


def test_memory_core_never_imports_nonebot() -> None:
    offenders = [
        f"{where}:{line}: {target}"
        for where, line, target in imports()
        if target.split(".")[0] in ("nonebot", "nonebot_plugin_yuji")
    ]
    assert offenders == [], "memory_core must not import nonebot or the plugin:\n" + "\n".join(
        offenders
    )


def test_every_part_has_a_layer() -> None:
    parts = {_part(_module(path)) for path in CORE.rglob("*.py")}
    missing = sorted(parts - RANK.keys())
    assert missing == [], f"add {missing} to LAYERS in tests/test_layering.py"


def test_imports_never_go_up_a_layer() -> None:
    offenders: list[str] = []
    for where, line, target, source, imported in _core_edges():
        if imported in RANK and source in RANK and RANK[imported] > RANK[source]:
            offenders.append(
                f"{where}:{line} imports {target}: {source} ({LAYERS[RANK[source]][0]}) "
                f"may not import {imported} ({LAYERS[RANK[imported]][0]}, a higher layer)"
            )
    assert offenders == [], "imports up the layers:\n" + "\n".join(offenders)


def test_packages_import_each_other_without_cycles() -> None:
    graph: dict[str, dict[str, str]] = {}
    for where, line, target, source, imported in _core_edges():
        if source != imported:
            graph.setdefault(source, {}).setdefault(imported, f"{where}:{line} imports {target}")
    cycles: list[str] = []
    for start in sorted(graph):
        path = _path_back(graph, start)
        if path is not None:
            hops = itertools.pairwise(path)
            cycles.append(" -> ".join(path) + "\n  " + "\n  ".join(graph[a][b] for a, b in hops))
    assert cycles == [], "package cycles:\n" + "\n".join(cycles)


def _path_back(graph: dict[str, dict[str, str]], start: str) -> list[str] | None:
    """A path start -> ... -> start through the import graph, or None."""
    stack: list[list[str]] = [[start, nxt] for nxt in sorted(graph.get(start, {}))]
    seen: set[str] = set()
    while stack:
        path = stack.pop()
        last = path[-1]
        if last == start:
            return path
        if last in seen:
            continue
        seen.add(last)
        stack.extend([*path, nxt] for nxt in sorted(graph.get(last, {})))
    return None


def test_sql_lives_in_storage() -> None:
    """Only the storage layer builds statements: outside it, SQLAlchemy appears only as
    the connection type a service passes to compose repository calls in one transaction."""
    offenders = [
        f"{where}:{line} imports {target}"
        for where, line, target in imports()
        if target.split(".")[0] == "sqlalchemy"
        and not where.startswith("memory_core/storage/")
        and target != "sqlalchemy.ext.asyncio"
    ]
    assert offenders == [], "SQL outside memory_core/storage:\n" + "\n".join(offenders)


STORAGE = CORE / "storage"


def _storage_part(module: str) -> str | None:
    """The subpackage of storage a module belongs to: its name, `.` for the shared
    modules at the top, None outside storage and for the package's own facade."""
    parts = module.split(".")
    if parts[:2] != ["memory_core", "storage"] or len(parts) == 2:
        return None
    return parts[2] if (STORAGE / parts[2]).is_dir() else "."


def test_only_storage_reaches_into_its_subpackages() -> None:
    """The rest of the core imports `memory_core.storage` (its facade) or a shared module
    at its top, never a concept's subpackage, so a module can move inside storage without
    its callers noticing. Tests are exempt: they mirror the modules they test."""
    offenders = [
        f"{where}:{line} imports {target}"
        for where, line, target in imports()
        if not where.startswith("memory_core/storage/") and _storage_part(target) not in (None, ".")
    ]
    assert offenders == [], "import these through memory_core.storage:\n" + "\n".join(offenders)


def test_storage_subpackages_import_each_other_without_cycles() -> None:
    graph: dict[str, dict[str, str]] = {}
    for where, line, target in imports():
        source = _storage_part(_module(CORE.parent / where))
        imported = _storage_part(target)
        if source and imported and source != imported and "migrations" not in (source, imported):
            graph.setdefault(source, {}).setdefault(imported, f"{where}:{line} imports {target}")
    assert graph, "the storage import graph is empty: _storage_part is broken"
    cycles = [" -> ".join(path) for start in sorted(graph) if (path := _path_back(graph, start))]
    assert cycles == [], "cycles between storage's subpackages:\n" + "\n".join(cycles)


def test_no_storage_folder_holds_more_than_fifteen_modules() -> None:
    """Alembic's `migrations/versions` is exempt: it is one numbered history, read in
    order, not a concept to split."""
    crowded = {
        str(folder.relative_to(CORE.parent)): count
        for folder in [STORAGE, *(p for p in STORAGE.rglob("*") if p.is_dir())]
        if "__pycache__" not in folder.parts
        and folder.name != "versions"
        and (count := sum(1 for f in folder.glob("*.py") if f.name != "__init__.py")) > 15
    }
    assert crowded == {}, f"split these folders by concept: {crowded}"
