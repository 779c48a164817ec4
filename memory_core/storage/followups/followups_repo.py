"""The follow-ups' SQL (migration 0030): the memories that may be follow-ups, with when
their evidence was said, and what was done about each (`followups`), a chat's choice
(`followup_chats`) and who asked not to be asked (`followup_mutes`).

The candidates are read through the one scope rule (memory_sql.in_chat: the chat's
own memories, active), not recall's visibility (a plan dated tomorrow is not "valid"
yet, and a state past its end no longer is, yet both are follow-ups). Retracted
(forgotten ones are) and cold memories never come back; nothing here joins across
chats, and nothing carried into a chat (`core.carrying.carried`) is ever its plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import and_, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.clock import as_utc
from memory_core.storage.memories.memory_sql import in_chat, to_memory
from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import (
    experiences,
    followup_chats,
    followup_mutes,
    followups,
    memories,
    memory_evidence,
    memory_relations,
    memory_versions,
)
from memory_core.types import Memory

_m, _e, _x, _r = memories.c, memory_evidence.c, experiences.c, memory_relations.c
_f, _ch, _mu, _v = followups.c, followup_chats.c, followup_mutes.c, memory_versions.c
_CHUNK = 500
"""Values per IN list (well under either engine's limit on bound values)."""
SAID_CHARS = 300
"""Enough of a message to read the days it names (a date is said early, not 100 KB in)."""
PLAN_TYPES = ("event", "state")
OWN_WORD = ("self", "self-only")


@dataclass(frozen=True, slots=True)
class PlanRow:
    """A memory that may be a follow-up, its evidence's times, and its record."""

    memory: Memory
    told_first: datetime | None
    told_last: datetime | None
    superseded: bool
    record: FollowupRecord | None
    said: tuple[tuple[datetime, str], ...] = ()
    """The cited messages of anyone but the bot: (sent_at, the first SAID_CHARS of
    the text), earliest first."""
    first: Memory | None = None
    """The memory as first written (its earliest version)."""


@dataclass(frozen=True, slots=True)
class FollowupRecord:
    scope: str
    memory_id: int
    user_id: str
    state: str | None
    offers: int
    offered_day: str | None
    asked_at: datetime | None
    sent_text: str | None
    reason: str
    updated_at: datetime


class FollowupsRepo(Repository):
    async def plans(
        self, scope: str | None = None, *, conn: AsyncConnection | None = None
    ) -> list[PlanRow]:
        """The active, own-word plans (events and states) about a member, in `scope` or in
        every chat, each with its earliest cited message of anyone but the bot, the
        latest one of its member, whether it was superseded and its record."""
        where = [
            in_chat(scope),
            _m.type.in_(PLAN_TYPES),
            _m.subject_kind == "person",
            _m.subject_person.is_not(None),
            _m.word.in_(OWN_WORD),
        ]
        async with self.reading(conn) as c:
            found = [to_memory(row) for row in await c.execute(select(memories).where(*where))]
            rows: list[PlanRow] = []
            for start in range(0, len(found), _CHUNK):
                rows.extend(await self._with_evidence(c, found[start : start + _CHUNK]))
        return rows

    async def _with_evidence(self, conn: AsyncConnection, chunk: Sequence[Memory]) -> list[PlanRow]:
        ids = [m.id for m in chunk]
        told = (
            select(
                _e.memory_id,
                func.min(_x.sent_at).filter(_x.is_bot.is_(False)).label("first"),
                func.max(_x.sent_at).filter(_x.sender_id == _m.subject_person).label("last"),
            )
            .join_from(memory_evidence, experiences, _x.id == _e.experience_id)
            .join(memories, _m.id == _e.memory_id)
            .where(_e.memory_id.in_(ids), _x.scope == _m.scope)
            .group_by(_e.memory_id)
        )
        times = {row.memory_id: (row.first, row.last) for row in await conn.execute(told)}
        words = (
            select(_e.memory_id, _x.sent_at, func.substr(_x.text, 1, SAID_CHARS).label("text"))
            .join_from(memory_evidence, experiences, _x.id == _e.experience_id)
            .where(_e.memory_id.in_(ids), _x.is_bot.is_(False))
            .order_by(_e.memory_id, _x.sent_at, _x.id)
        )
        said: dict[int, list[tuple[datetime, str]]] = {}
        for row in await conn.execute(words):
            said.setdefault(row.memory_id, []).append((as_utc(row.sent_at), row.text))
        closed = select(_r.dst_id).where(_r.kind == "supersedes", _r.dst_id.in_(ids))
        superseded = {row.dst_id for row in await conn.execute(closed)}
        records = await self._records(conn, ids)
        firsts: dict[int, Memory] = {}
        earliest = (
            select(memory_versions)
            .where(_v.memory_id.in_(ids))
            .order_by(_v.memory_id, _v.version.desc())
        )
        for row in await conn.execute(earliest):  # the lowest version of each comes last
            firsts[row.memory_id] = _version(row)
        return [
            PlanRow(
                memory=m,
                told_first=_utc(times.get(m.id, (None, None))[0]),
                told_last=_utc(times.get(m.id, (None, None))[1]),
                superseded=m.id in superseded,
                record=records.get(m.id),
                said=tuple(said.get(m.id, ())),
                first=firsts.get(m.id),
            )
            for m in chunk
        ]

    async def _records(
        self, conn: AsyncConnection, ids: Sequence[int]
    ) -> dict[int, FollowupRecord]:
        found = await conn.execute(select(followups).where(_f.memory_id.in_(ids)))
        return {row.memory_id: _record(row) for row in found}

    async def record(
        self,
        scope: str,
        memory_id: int,
        user_id: str,
        state: str,
        *,
        at: datetime,
        reason: str = "",
        sent_text: str | None = None,
        conn: AsyncConnection | None = None,
    ) -> None:
        """Set what was done about the memory's follow-up (one row per memory)."""
        values: dict[str, Any] = {"state": state, "reason": reason, "updated_at": as_utc(at)}
        if state == "asked":
            values["asked_at"] = as_utc(at)
        if sent_text is not None:
            values["sent_text"] = sent_text
        async with self.writing(conn, (scope,)) as c:
            stmt = upsert(c, followups).values(
                scope=scope, memory_id=memory_id, user_id=user_id, **values
            )
            await c.execute(stmt.on_conflict_do_update(index_elements=["memory_id"], set_=values))

    async def offered(
        self,
        scope: str,
        memory_id: int,
        user_id: str,
        day: str,
        *,
        at: datetime,
        conn: AsyncConnection | None = None,
    ) -> None:
        """The follow-up was put in a reply prompt on local `day`: counted once a day."""
        async with self.writing(conn, (scope,)) as c:
            stmt = upsert(c, followups).values(
                scope=scope,
                memory_id=memory_id,
                user_id=user_id,
                offers=1,
                offered_day=day,
                updated_at=as_utc(at),
            )
            excluded = cast(Any, stmt).excluded
            await c.execute(
                stmt.on_conflict_do_update(
                    index_elements=["memory_id"],
                    set_={"offers": _f.offers + 1, "offered_day": day, "updated_at": as_utc(at)},
                    where=and_(_f.offered_day.is_(None) | (_f.offered_day != excluded.offered_day)),
                )
            )

    async def sent_since(
        self, since: datetime, *, conn: AsyncConnection | None = None
    ) -> list[tuple[str, str, datetime]]:
        """(chat, person, when) of every follow-up sent unprompted since `since` (those
        with the text sent), in every chat: the caps count them."""
        async with self.reading(conn) as c:
            found = await c.execute(
                select(_f.scope, _f.user_id, _f.asked_at).where(
                    _f.sent_text.is_not(None), _f.asked_at >= as_utc(since)
                )
            )
            return [(row.scope, row.user_id, as_utc(row.asked_at)) for row in found]

    async def awaiting_answer(
        self, since: datetime, *, conn: AsyncConnection | None = None
    ) -> list[tuple[str, int, str, datetime]]:
        """(chat, memory id, person, when sent) of the follow-ups sent unprompted since
        `since` and still `asked`."""
        async with self.reading(conn) as c:
            found = await c.execute(
                select(_f.scope, _f.memory_id, _f.user_id, _f.asked_at).where(
                    _f.state == "asked", _f.sent_text.is_not(None), _f.asked_at >= as_utc(since)
                )
            )
            return [(r.scope, r.memory_id, r.user_id, as_utc(r.asked_at)) for r in found]

    async def spoke(
        self,
        scope: str,
        user_id: str | None,
        after: datetime,
        until: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> datetime | None:
        """The latest message in `scope` in (after, until] from `user_id`, or from anyone
        but the bot when None."""
        who = _x.sender_id == user_id if user_id is not None else _x.is_bot.is_(False)
        async with self.reading(conn) as c:
            found = await c.execute(
                select(func.max(_x.sent_at)).where(
                    _x.scope == scope, who, _x.sent_at > as_utc(after), _x.sent_at <= as_utc(until)
                )
            )
            return _utc(found.scalar_one_or_none())

    # --- a chat's choice and its members' -------------------------------------------------

    async def chat_enabled(self, scope: str, *, conn: AsyncConnection | None = None) -> bool | None:
        """The chat's choice; None: never chosen (the default applies)."""
        async with self.reading(conn) as c:
            found = await c.execute(select(_ch.enabled).where(_ch.scope == scope))
            value = found.scalar_one_or_none()
        return None if value is None else bool(value)

    async def set_chat(
        self,
        scope: str,
        enabled: bool,
        by: str,
        *,
        at: datetime,
        conn: AsyncConnection | None = None,
    ) -> None:
        values = {"enabled": enabled, "changed_by": by, "updated_at": as_utc(at)}
        async with self.writing(conn, (scope,)) as c:
            stmt = upsert(c, followup_chats).values(scope=scope, **values)
            await c.execute(stmt.on_conflict_do_update(index_elements=["scope"], set_=values))

    async def muted(self, scope: str, *, conn: AsyncConnection | None = None) -> set[str]:
        async with self.reading(conn) as c:
            found = await c.execute(select(_mu.user_id).where(_mu.scope == scope))
            return {row.user_id for row in found}

    async def set_muted(
        self,
        scope: str,
        user_id: str,
        muted: bool,
        *,
        at: datetime,
        conn: AsyncConnection | None = None,
    ) -> None:
        async with self.writing(conn, (scope,)) as c:
            if muted:
                stmt = upsert(c, followup_mutes).values(
                    scope=scope, user_id=user_id, created_at=as_utc(at)
                )
                await c.execute(stmt.on_conflict_do_nothing())
            else:
                await c.execute(
                    delete(followup_mutes).where(_mu.scope == scope, _mu.user_id == user_id)
                )

    async def forget(
        self, scope: str, user_id: str, *, conn: AsyncConnection | None = None
    ) -> None:
        """A person forgotten in a chat (`/forget-me`): the texts sent them about their
        plans are blanked; the rows stay, so what was done is not done again (their
        plans' memories are retracted by the same request, which ends the follow-ups)."""
        async with self.writing(conn, (scope,)) as c:
            await c.execute(
                update(followups)
                .where(_f.scope == scope, _f.user_id == user_id)
                .values(sent_text=None)
            )


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else as_utc(value)


def _version(row: Any) -> Memory:
    """An earlier version as a Memory (what the follow-up rules read of it)."""
    return Memory(
        id=row.memory_id,
        scope="",
        type=row.type,
        subject=row.subject,
        content=row.content,
        importance=row.importance,
        confidence=row.confidence,
        status=row.status,
        valid_from=_utc(row.valid_from),
        valid_to=_utc(row.valid_to),
        version=row.version,
        origin="",
        created_at=as_utc(row.changed_at),
        updated_at=as_utc(row.changed_at),
        last_accessed_at=None,
        hit_count=0,
        pinned=False,
        starred=False,
    )


def _record(row: Any) -> FollowupRecord:
    return FollowupRecord(
        scope=row.scope,
        memory_id=row.memory_id,
        user_id=row.user_id,
        state=row.state,
        offers=row.offers,
        offered_day=row.offered_day,
        asked_at=_utc(row.asked_at),
        sent_text=row.sent_text,
        reason=row.reason,
        updated_at=as_utc(row.updated_at),
    )
