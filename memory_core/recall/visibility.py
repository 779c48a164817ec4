"""Fail-closed visibility: the one rule every read of memories goes through first.

A memory is visible to a question asked in `scope` at `now` when it belongs to that
chat, has not been retracted and is valid at `now`; a retrospective question
("以前…", "原来…", "当时…") also sees memories whose validity has ended and cold
ones, but never retracted ones, other chats' or ones that start after `now`.

The memory repository applies the rule in SQL to every read recall makes
(`MemoryRepo.visible_ids`, `.word_candidates`; storage/memories/memory_sql.py);
`is_visible()` is the same rule in Python, applied once more to whatever a stage
returns.
"""

from __future__ import annotations

from datetime import datetime

from memory_core.clock import as_utc
from memory_core.types import Memory

from .language import is_retrospective as is_retrospective


def is_visible(memory: Memory, scope: str, now: datetime, *, retrospective: bool = False) -> bool:
    now = as_utc(now)
    if memory.scope != scope:
        return False
    if memory.valid_from is not None and memory.valid_from > now:
        return False
    if retrospective:
        return memory.status in ("active", "cold")
    return memory.status == "active" and (memory.valid_to is None or memory.valid_to > now)
