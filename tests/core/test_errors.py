"""The error tree: drawn once in `errors.py`'s docstring, each class expected by a test.

Classes raised only here: the translations of SQLite's errors (`storage/failures.py`)
and `ScopeViolation`. The others are raised, and expected, where their module is tested.
"""

from __future__ import annotations

import inspect
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from memory_core import NewExperience, Yuji, errors
from memory_core.storage.engine import Database
from memory_core.storage.ops.ops_repo import count_rows

TESTS = Path(__file__).resolve().parents[1]
T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)


def _classes() -> dict[str, type[errors.YujiError]]:
    return {
        name: cls
        for name, cls in vars(errors).items()
        if inspect.isclass(cls) and issubclass(cls, errors.YujiError)
    }


def _drawn() -> dict[str, str | None]:
    """Each class of the docstring's tree and the class it hangs under."""
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        found = re.match(r"^ {4}([ │├└─]*)([A-Z]\w+)", line)
        if found is None:
            continue
        depth, name = len(found.group(1)) // 4, found.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[name] = stack[-1][1] if stack else None
        stack.append((depth, name))
    return parents


def test_the_docstring_draws_exactly_the_classes_of_the_module() -> None:
    actual = {
        name: None if cls is errors.YujiError else cls.__bases__[0].__name__
        for name, cls in _classes().items()
    }
    assert _drawn() == actual


@pytest.mark.parametrize("name", sorted(_classes()))
def test_every_error_class_is_named_by_a_test(name: str) -> None:
    naming = [
        path
        for path in TESTS.rglob("*.py")
        if re.search(rf"\b{name}\b", path.read_text(encoding="utf-8"))
    ]
    assert naming, f"no test expects {name}"


async def test_a_broken_constraint_is_a_constraint_violation(core: Yuji) -> None:
    with pytest.raises(
        errors.ConstraintViolation, match=r"NOT NULL constraint failed|null value in column"
    ):
        async with core.db.write() as conn:
            await conn.execute(text("INSERT INTO experiences (id) VALUES (NULL)"))
    assert await core.archive.max_id("group:1") == 0


async def test_an_append_only_trigger_is_an_append_only_violation(core: Yuji) -> None:
    experience_id = await core.archive.append(
        NewExperience("group:1", "m1", "42", "原话", sent_at=T0, segments=[])
    )
    with pytest.raises(errors.AppendOnlyViolation, match="experiences is append-only"):
        async with core.db.write() as conn:
            await conn.execute(text("DELETE FROM experiences"))
    assert (await core.archive.get("group:1", experience_id)).text == "原话"


async def test_a_file_that_is_no_database_is_a_storage_error(tmp_path: Path) -> None:
    path = tmp_path / "yuji.db"
    path.write_bytes(b"not a database, " * 512)
    db = Database(f"sqlite+aiosqlite:///{path}")
    try:
        with pytest.raises(errors.StorageError, match="not a database") as raised:
            async with db.read() as conn:
                await conn.execute(text("SELECT count(*) FROM sqlite_master"))
    finally:
        await db.dispose()
    assert type(raised.value) is errors.StorageError
    with pytest.raises(errors.StorageError, match=f"cannot count rows of {path}: "):
        count_rows(path, ["experiences"])


async def test_a_bad_statement_is_a_bug_and_stays_untranslated(core: Yuji) -> None:
    with pytest.raises(Exception, match=r"no such table|does not exist") as raised:
        async with core.db.read() as conn:
            await conn.execute(text("SELECT * FROM no_such_table"))
    assert not isinstance(raised.value, errors.YujiError)


async def test_a_command_message_of_another_chat_is_a_scope_violation(core: Yuji) -> None:
    command = NewExperience("group:2", "m9", "42", "/remember 鱼怕猫", sent_at=T0, segments=[])
    with pytest.raises(errors.ScopeViolation) as raised:
        await core.chat_commands.remember("group:1", "鱼怕猫", command=command, by="42")
    assert isinstance(raised.value, errors.NotFound)  # worded to users like an unknown id
    assert await core.archive.max_id("group:2") == 0
