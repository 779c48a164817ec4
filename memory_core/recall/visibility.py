"""Fail-closed visibility: the one rule every read of memories goes through first.

A memory is visible to a question asked in `scope` at `now` when it belongs to that
chat, has not been retracted and is valid at `now`; a retrospective question
("以前…", "原来…", "当时…") also sees memories whose validity has ended and cold
ones, but never retracted ones, other chats' or ones that start after `now`.

`visible()` is the SQL form every stage puts in its WHERE clause; `is_visible()`
is the same rule in Python, applied once more to whatever a stage returns.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache

from sqlalchemy import ColumnElement, String, and_, bindparam, literal, or_

from memory_core.clock import as_utc
from memory_core.storage.schema import memories
from memory_core.types import Memory

from .language import is_retrospective as is_retrospective

_m = memories.c


def visible(scope: str, now: datetime, *, retrospective: bool = False) -> ColumnElement[bool]:
    return _rule(literal(scope, String), literal(as_utc(now), _m.valid_from.type), retrospective)


@cache
def visible_bound(retrospective: bool) -> ColumnElement[bool]:
    """`visible()` with the chat and the moment left as bound parameters (give them
    with `visible_params`): the hot path builds its statement once, not per question."""
    scope = bindparam("visible_scope", type_=String)
    now = bindparam("visible_now", type_=_m.valid_from.type)
    return _rule(scope, now, retrospective)


def visible_params(scope: str, now: datetime) -> dict[str, object]:
    return {"visible_scope": scope, "visible_now": as_utc(now)}


def _rule(
    scope: ColumnElement[str], now: ColumnElement[datetime], retrospective: bool
) -> ColumnElement[bool]:
    started = or_(_m.valid_from.is_(None), _m.valid_from <= now)
    if retrospective:
        return and_(_m.scope == scope, _m.status.in_(("active", "cold")), started)
    return and_(
        _m.scope == scope,
        _m.status == "active",
        started,
        or_(_m.valid_to.is_(None), _m.valid_to > now),
    )


def is_visible(memory: Memory, scope: str, now: datetime, *, retrospective: bool = False) -> bool:
    now = as_utc(now)
    if memory.scope != scope:
        return False
    if memory.valid_from is not None and memory.valid_from > now:
        return False
    if retrospective:
        return memory.status in ("active", "cold")
    return memory.status == "active" and (memory.valid_to is None or memory.valid_to > now)
