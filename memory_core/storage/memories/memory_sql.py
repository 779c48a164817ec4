"""The statements of the memory aggregate that are more than one line: row mapping,
the visibility rule in SQL, and the full-text candidate queries. `MemoryRepo`
(memory_repo.py) is the only user.

Visibility, the one rule every read of memories for a question goes through, narrows
the one scope rule (`in_chat`: a chat's own memories, active) to a moment: a
memory is visible to a question asked in `scope` at `now` when it belongs to that
chat, has not been retracted and is valid at `now`; a retrospective question also
sees memories whose validity has ended and cold ones, but never retracted ones,
other chats' or ones that start after `now`. `memory_core.recall.visibility` holds
the same rule in Python, applied once more to whatever a stage returns.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    String,
    and_,
    bindparam,
    column,
    func,
    literal,
    literal_column,
    or_,
    select,
    table,
    text,
)

from memory_core.clock import as_utc
from memory_core.storage.fulltext.ranked import pg_ranked
from memory_core.storage.schema import memories, memory_versions
from memory_core.types import Memory

m = memories.c

memory_fts = table("memory_fts", column("rowid"), column("bi"))
"""The full-text index (raw SQL: FTS5 on SQLite, migrations 0001, 0002 and 0013; a
table with a tsvector on PostgreSQL, 0016; see storage/fulltext/fts.py and ranked.py)."""


FORGET_ACTOR = "forget-person"
"""memory_core.memories.service.FORGET_ACTOR (storage may not import the domain)."""


def forgotten(memory_id: Any) -> Any:
    """SQL: the memory was retracted for a person's request to be forgotten."""
    v = memory_versions.c
    return select(v.id).where(v.memory_id == memory_id, v.changed_by == FORGET_ACTOR).exists()


def to_memory(row: Any) -> Memory:
    return Memory(
        id=row.id,
        scope=row.scope,
        type=row.type,
        subject=row.subject,
        content=row.content,
        importance=row.importance,
        confidence=row.confidence,
        status=row.status,
        valid_from=row.valid_from,
        valid_to=row.valid_to,
        version=row.version,
        origin=row.origin,
        created_at=row.created_at,
        updated_at=row.updated_at,
        last_accessed_at=row.last_accessed_at,
        hit_count=row.hit_count,
        pinned=bool(row.pinned),
        starred=bool(row.starred),
        subject_kind=row.subject_kind,
        subject_person=row.subject_person,
        word=row.word,
    )


# --- the one scope rule --------------------------------------------------------------


def in_chat(scope: ColumnElement[str] | str | None, *, cold: bool = False) -> ColumnElement[bool]:
    """The one scope rule every read of a chat's memories starts from: the memories of
    that chat (None: of every chat, each read as its own chat's), active (and cold ones
    too when `cold`), whatever their validity. Another chat's memory never passes it:
    what of it may join a wake comes only through `core.carrying.carried`, and is
    never stored in the chat it joins. Visibility narrows it to what is valid at a
    moment; the follow-ups read it as it is (a plan dated tomorrow is not valid yet, a
    state past its end no longer is)."""
    status = m.status.in_(("active", "cold")) if cold else m.status == "active"
    return status if scope is None else and_(m.scope == scope, status)


# --- visibility ---------------------------------------------------------------------


def visible(scope: str, now: datetime, *, retrospective: bool = False) -> ColumnElement[bool]:
    return _rule(literal(scope, String), literal(as_utc(now), m.valid_from.type), retrospective)


def upcoming(scope: str, now: datetime) -> ColumnElement[bool]:
    """The chat's memories (the one scope rule) that start after `now`: a plan dated
    ahead, which no question sees until its day, but consolidation must find to cancel
    or move it."""
    return and_(in_chat(scope), m.valid_from > literal(as_utc(now), m.valid_from.type))


@cache
def visible_bound(retrospective: bool) -> ColumnElement[bool]:
    """`visible()` with the chat and the moment left as bound parameters (given by
    `visible_params`): the hot path builds its statement once, not per question."""
    scope = bindparam("visible_scope", type_=String)
    now = bindparam("visible_now", type_=m.valid_from.type)
    return _rule(scope, now, retrospective)


def visible_params(scope: str, now: datetime) -> dict[str, object]:
    return {"visible_scope": scope, "visible_now": as_utc(now)}


def _rule(
    scope: ColumnElement[str], now: ColumnElement[datetime], retrospective: bool
) -> ColumnElement[bool]:
    started = or_(m.valid_from.is_(None), m.valid_from <= now)
    if retrospective:
        return and_(in_chat(scope, cold=True), started)
    return and_(in_chat(scope), started, or_(m.valid_to.is_(None), m.valid_to > now))


# --- full-text candidates -------------------------------------------------------------


def candidates(visible_: ColumnElement[bool], limit: int, dialect: str) -> Select[Any]:
    """The `limit` best (bm25) visible memories whose index row matches `:match`.

    The full-text index must drive: a plain join lets SQLite walk the chat's memories
    and run the MATCH once per memory. So the best matches are ranked first in a
    subquery (with room for some that visibility then removes) and joined after."""
    ranked = _ranked(limit * 4, dialect)
    return (
        select(memories)
        .join_from(ranked, memories, m.id == ranked.c.rid)
        .where(visible_)
        .order_by(ranked.c.rank)
        .limit(limit)
    )


def candidates_with_columns(visible_: ColumnElement[bool], limit: int, dialect: str) -> Select[Any]:
    """Like `candidates`, with each memory's `bi` column.

    The column is read by rowid for the kept rows only: selecting it in the ranking
    subquery would read it for every ranked row (3x slower at 10k)."""
    doc = memory_fts.alias("doc")
    return candidates(visible_, limit, dialect).add_columns(doc.c.bi).join(doc, doc.c.rowid == m.id)


def bm25(where: ColumnElement[bool], limit: int, dialect: str) -> Any:
    """Plain bm25 ranking of the rows matching `:match`: (id, rank)."""
    ranked = _ranked(limit * 4, dialect)
    return (
        select(m.id, ranked.c.rank)
        .join_from(ranked, memories, m.id == ranked.c.rid)
        .where(where)
        .order_by(ranked.c.rank)
        .limit(limit)
    )


def _ranked(limit: int, dialect: str) -> Any:
    if dialect == "postgresql":
        return pg_ranked("memory_fts", str(int(limit))).subquery("ranked")
    rank = func.bm25(literal_column("memory_fts"))
    return (
        select(memory_fts.c.rowid.label("rid"), rank.label("rank"))
        .where(text("memory_fts MATCH :match"))
        .order_by(rank)
        .limit(limit)
        .subquery()
    )
