"""The memory aggregate is queried from one repository (issue #18): outside
MemoryRepo's modules, no file of memory_core/storage imports a memory table, imports
memory_sql, or names a memory table in SQL text. Migrations and the schema define the
tables and are left out."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

STORAGE = Path(__file__).resolve().parents[2] / "memory_core" / "storage"

MEMORY_TABLES = frozenset(
    {"memories", "memory_versions", "memory_evidence", "memory_relations", "aliases"}
)
"""The tables' names in storage/schema.py (memory_relations is the relations table)."""

OWNERS = frozenset(
    {
        "memory_repo.py",
        "memory_reads.py",
        "memory_history.py",
        "memory_links.py",
        "memory_search.py",
        "memory_uses.py",
        "memory_console.py",
        "memory_sql.py",
        "schema.py",
        # Moves every table's rows whole between two stores (yuji copy-store); it
        # checksums memories as rows, not as the aggregate.
        "copy_repo.py",
    }
)


_IN_SQL = re.compile(
    r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+"
    r"(memories|memory_versions|memory_evidence|relations|memory_relations|aliases|memory_fts\w*)\b",
    re.IGNORECASE,
)


def offences(source: str, where: str) -> Iterator[str]:
    """Each place `source` reads a memory table, as "file:line: what"."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = (node.module or "").rpartition(".")[2]
            for alias in node.names:
                if module == "schema" and alias.name in MEMORY_TABLES:
                    yield f"{where}:{node.lineno}: imports the table {alias.name}"
                if module == "memory_sql" or alias.name == "memory_sql":
                    yield f"{where}:{node.lineno}: imports memory_sql ({alias.name})"
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in MEMORY_TABLES
            and isinstance(node.value, ast.Name)
            and node.value.id == "schema"
        ):
            yield f"{where}:{node.lineno}: names the table schema.{node.attr}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for match in _IN_SQL.finditer(node.value):
                yield f"{where}:{node.lineno}: names the table {match.group(1)} in SQL"


def test_only_memory_repo_modules_name_the_memory_tables() -> None:
    found = [
        offence
        for path in sorted(STORAGE.glob("*.py"))
        if path.name not in OWNERS
        for offence in offences(path.read_text(encoding="utf-8"), f"storage/{path.name}")
    ]
    assert found == [], "read the memory tables through MemoryRepo:\n" + "\n".join(found)


def test_the_scan_finds_each_way_of_naming_a_table() -> None:
    source = (
        "from .schema import aliases, cards\n"
        "from .memory_sql import m\n"
        "x = schema.memory_evidence\n"
        "q = text('SELECT id FROM memories JOIN memory_fts ON 1')\n"
    )
    assert sorted(offences(source, "f.py")) == [
        "f.py:1: imports the table aliases",
        "f.py:2: imports memory_sql (m)",
        "f.py:3: names the table schema.memory_evidence",
        "f.py:4: names the table memories in SQL",
        "f.py:4: names the table memory_fts in SQL",
    ]
