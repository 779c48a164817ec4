"""Every repository method takes the optional `conn=` that repository.py promises, so
a service can compose any of them into one transaction (issue #18)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from datetime import UTC, datetime

from memory_core import Yuji
from memory_core.storage import __path__ as storage_path
from memory_core.storage.chat.chat_repo import ChatRepo
from memory_core.storage.repository import Repository

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
WHOLE_FILE = {("RedactionRepo", "purge_log"), ("RedactionRepo", "vacuum")}
"""Work on the whole file that cannot run inside a transaction."""


def _repositories() -> list[type[Repository]]:
    for info in pkgutil.iter_modules(storage_path):
        importlib.import_module(f"memory_core.storage.{info.name}")
    found: list[type[Repository]] = []
    todo = [Repository]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found


def test_every_repository_method_takes_a_connection() -> None:
    missing = [
        f"{cls.__name__}.{name}"
        for cls in _repositories()
        for name, method in vars(cls).items()
        if inspect.iscoroutinefunction(method)
        and (cls.__name__, name) not in WHOLE_FILE
        and "conn" not in inspect.signature(method).parameters
    ]
    assert _repositories()
    assert missing == []


async def test_a_chat_state_write_joins_the_callers_transaction(core: Yuji) -> None:
    repo = ChatRepo(core.db)
    try:
        async with core.db.write() as conn:
            await repo.set_muted("group:1", T0, T0, conn=conn)
            assert (await repo.state("group:1", conn=conn)).muted_until == T0
            raise RuntimeError("the caller's later step fails")
    except RuntimeError:
        pass
    assert (await repo.state("group:1")).muted_until is None  # rolled back with it
    async with core.db.write() as conn:
        await repo.touch("group:1", T0, reply_at=T0, conn=conn)
    assert (await repo.state("group:1")).last_reply_at == T0
