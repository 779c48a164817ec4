"""A wake while the database is away: the reply goes out without what the store holds.

Recall, the chat's recent messages and its state all come from the database; when it
cannot be reached (an outage, a full disk, a lock held too long), the persona still
answers the message in front of it, without recalled memories, and the log says so
once per wake. What the reply would have recorded (`/why`'s injection, credit, the
wake time) is skipped the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import TypeVar

from memory_core.errors import ConstraintViolation, StorageError

log = logging.getLogger("yuji.chat")

T = TypeVar("T")


async def or_default(work: Awaitable[T], default: T, what: str, scope: str) -> T:
    """`work`'s result, or `default` when the store failed (a constraint is a bug: raised)."""
    try:
        return await work
    except ConstraintViolation:
        raise
    except StorageError as exc:
        log.warning("yuji: %s in %s skipped, the database failed: %s", what, scope, exc)
        return default


def without_memories(scope: str, exc: StorageError) -> None:
    log.warning(
        "yuji: answering in %s without recalled memories or recent messages: "
        "the database failed (%s)",
        scope,
        exc,
    )
