"""SQL of the web console: its own tables (the audit, live overrides) and what it
reads of other aggregates: messages per chat and per hour, a day of a chat's
messages and a search through them, recent replies, diaries, the timeline and the
nightly grid.

Every read of the memory tables (counts, hourly new memories, filtered pages,
subjects, a memory's chat and relations, the memories about a member) is `MemoryRepo`'s (memory_console.py); the
methods here that name memories only hand over to the `MemoryRepo` this repository
holds, in the caller's connection. Every lookup that takes a scope filters on it: an
id of another chat reads as missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import String, and_, column, delete, func, insert, select, values
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.archive.archive_repo import experience_of
from memory_core.storage.chat.chat_repo import Injection, injection_of
from memory_core.storage.consolidation.consolidation_repo import Batch
from memory_core.storage.dialect import utc_hour
from memory_core.storage.engine import Database
from memory_core.storage.memories.memory_console import MemoryFilter as MemoryFilter
from memory_core.storage.memories.memory_console import RelationRow as RelationRow
from memory_core.storage.memories.memory_repo import MemoryRepo
from memory_core.storage.nightly.nightly_health_repo import ScopeHealth
from memory_core.storage.nightly.nightly_repo import Diary, StepRow, TimelineEntry, step_of
from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import (
    console_audit,
    console_overrides,
    consolidation_batches,
    consolidation_cursors,
    diaries,
    experiences,
    injections,
    nightly_runs,
    nightly_scopes,
    timeline,
)
from memory_core.types import Experience, Memory

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class AuditEntry:
    id: int
    at: datetime
    address: str
    via: str
    """`session` (the login cookie) or `bearer` (a script)."""
    action: str
    target: str
    detail: str


@dataclass(frozen=True, slots=True)
class ChatCounts:
    scope: str
    messages: int
    memories: int


@dataclass(frozen=True, slots=True)
class ChatWork:
    """A chat's background work as the chats list shows it."""

    pending: int
    """Messages behind the consolidation watermark."""
    last_batch: Batch | None
    steps: tuple[StepRow, ...]
    """The latest night's steps, in the order they ran."""
    health: ScopeHealth


class ConsoleRepo(Repository):
    def __init__(self, db: Database, memory_repo: MemoryRepo) -> None:
        super().__init__(db)
        self.memory_repo = memory_repo
        """Where the console's memory counts, pages, subjects and relations are read."""

    # --- audit ---------------------------------------------------------------------

    async def add_audit(
        self,
        *,
        at: datetime,
        address: str,
        via: str,
        action: str,
        target: str,
        detail: str,
        conn: AsyncConnection | None = None,
    ) -> int:
        async with self.writing(conn) as conn:
            result = await conn.execute(
                insert(console_audit).values(
                    at=at, address=address, via=via, action=action, target=target, detail=detail
                )
            )
            return int(result.inserted_primary_key[0])  # pyright: ignore[reportOptionalSubscript]

    async def audit(
        self, limit: int = 200, *, conn: AsyncConnection | None = None
    ) -> list[AuditEntry]:
        a = console_audit.c
        async with self.reading(conn) as conn:
            rows = await conn.execute(select(console_audit).order_by(a.id.desc()).limit(limit))
            return [
                AuditEntry(r.id, r.at, r.address, r.via, r.action, r.target, r.detail) for r in rows
            ]

    # --- overrides -----------------------------------------------------------------

    async def overrides(self, *, conn: AsyncConnection | None = None) -> dict[str, Any]:
        async with self.reading(conn) as conn:
            rows = await conn.execute(select(console_overrides))
            return {str(r.name): r.value for r in rows}

    async def set_override(
        self, name: str, value: Any, at: datetime, *, conn: AsyncConnection | None = None
    ) -> None:
        o = console_overrides.c
        async with self.writing(conn) as conn:
            await conn.execute(
                upsert(conn, console_overrides)
                .values(name=name, value=value, updated_at=at)
                .on_conflict_do_update(
                    index_elements=[o.name], set_={"value": value, "updated_at": at}
                )
            )

    async def drop_override(self, name: str, *, conn: AsyncConnection | None = None) -> None:
        async with self.writing(conn) as conn:
            await conn.execute(delete(console_overrides).where(console_overrides.c.name == name))

    # --- chats and activity ----------------------------------------------------------

    async def chat_counts(self, *, conn: AsyncConnection | None = None) -> list[ChatCounts]:
        """Messages and memories per chat (every chat that has either)."""
        e = experiences.c
        async with self.reading(conn) as conn:
            said = {
                str(r.scope): int(r.n)
                for r in await conn.execute(
                    select(e.scope, func.count().label("n")).group_by(e.scope)
                )
            }
            kept = await self.memory_repo.counts_by_scope(conn=conn)
        return [ChatCounts(s, said.get(s, 0), kept.get(s, 0)) for s in sorted(said.keys() | kept)]

    async def chat_work(
        self, scopes: Sequence[str], *, conn: AsyncConnection | None = None
    ) -> dict[str, ChatWork]:
        """Every listed chat's backlog, last batch and last night, in one statement: a
        page of many chats costs one round trip, not several per chat.

        One row per chat and step of its latest night, the chat's columns repeated."""
        if not scopes:
            return {}
        asked = values(column("scope", String), name="asked").data([(s,) for s in scopes]).cte()
        e, cur = experiences.c, consolidation_cursors.c
        behind = (
            select(e.scope, func.count().label("n"))
            .select_from(experiences.outerjoin(consolidation_cursors, cur.scope == e.scope))
            .where(e.scope.in_(scopes), e.id > func.coalesce(cur.acked_id, 0))
            .group_by(e.scope)
            .subquery("behind")
        )
        bc = consolidation_batches.c
        newest = select(bc.scope, func.max(bc.id).label("id")).group_by(bc.scope).subquery("newest")
        runs = nightly_runs.c
        latest = (
            select(runs.scope, func.max(runs.day).label("day"))
            .group_by(runs.scope)
            .subquery("latest")
        )
        b, r, h = (
            consolidation_batches.alias("b"),
            nightly_runs.alias("r"),
            nightly_scopes.alias("h"),
        )
        query = (
            select(
                asked.c.scope.label("chat"),
                behind.c.n,
                *(c.label(f"b_{c.name}") for c in b.c),
                *(c.label(f"r_{c.name}") for c in r.c),
                *(c.label(f"h_{c.name}") for c in h.c),
            )
            .select_from(
                asked.outerjoin(behind, behind.c.scope == asked.c.scope)
                .outerjoin(newest, newest.c.scope == asked.c.scope)
                .outerjoin(b, b.c.id == newest.c.id)
                .outerjoin(latest, latest.c.scope == asked.c.scope)
                .outerjoin(r, and_(r.c.scope == asked.c.scope, r.c.day == latest.c.day))
                .outerjoin(h, h.c.scope == asked.c.scope)
            )
            .order_by(asked.c.scope, r.c.id)
        )
        async with self.reading(conn) as conn:
            rows = (await conn.execute(query)).mappings().all()
        found: dict[str, ChatWork] = {}
        for m in rows:
            scope = str(m["chat"])
            if scope not in found:
                found[scope] = ChatWork(
                    pending=int(m["n"] or 0),
                    last_batch=_prefixed(Batch, "b_", m),
                    steps=(),
                    health=_prefixed(ScopeHealth, "h_", m) or ScopeHealth(scope),
                )
            step = _prefixed(StepRow, "r_", m)
            if step is not None:
                step = replace(step, detail=dict(step.detail or {}))
                found[scope] = replace(found[scope], steps=(*found[scope].steps, step))
        return found

    async def hourly(
        self, since: datetime, *, conn: AsyncConnection | None = None
    ) -> tuple[dict[str, int], dict[str, int]]:
        """Messages and new memories since `since`, per UTC hour ("YYYY-MM-DD HH")."""
        e = experiences.c
        async with self.reading(conn) as conn:
            hour = utc_hour(conn.dialect.name, e.sent_at).label("hour")
            rows = await conn.execute(
                select(hour, func.count().label("n")).where(e.sent_at >= since).group_by(hour)
            )
            said = {str(r.hour): int(r.n) for r in rows}
            kept = await self.memory_repo.created_per_hour(since, conn=conn)
        return said, kept

    # --- memories (MemoryRepo's queries) ---------------------------------------------------

    async def memories(
        self, scope: str, where: MemoryFilter, *, conn: AsyncConnection | None = None
    ) -> tuple[list[Memory], int]:
        """One page of this chat's memories, newest first, and how many match in all."""
        return await self.memory_repo.page(scope, where, conn=conn)

    async def subjects(
        self, scope: str, limit: int = 200, *, conn: AsyncConnection | None = None
    ) -> list[str]:
        """This chat's subjects, the most written about first."""
        return await self.memory_repo.subjects(scope, limit, conn=conn)

    async def memories_about(
        self, scope: str, user_id: str, limit: int = 500, *, conn: AsyncConnection | None = None
    ) -> list[Memory]:
        """This chat's memories about the member `user_id`, newest first."""
        return await self.memory_repo.memories_about(scope, user_id, limit, conn=conn)

    async def person_counts(
        self, scope: str, *, conn: AsyncConnection | None = None
    ) -> dict[str, dict[str, int]]:
        """This chat's memories about each member: user id -> word -> count."""
        return await self.memory_repo.person_counts(scope, conn=conn)

    async def scope_of_memory(
        self, memory_id: int, *, conn: AsyncConnection | None = None
    ) -> str | None:
        return await self.memory_repo.scope_of(memory_id, conn=conn)

    async def relations_of(
        self, scope: str, memory_id: int, *, conn: AsyncConnection | None = None
    ) -> list[RelationRow]:
        return await self.memory_repo.relations_of(scope, memory_id, conn=conn)

    # --- replies, diaries, timeline -------------------------------------------------------

    async def injections(
        self, scope: str, limit: int, *, conn: AsyncConnection | None = None
    ) -> list[Injection]:
        """The last `limit` replies' injections of this chat, newest first."""
        i = injections.c
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(injections).where(i.scope == scope).order_by(i.id.desc()).limit(limit)
            )
            return [injection_of(r) for r in rows]

    async def diaries(
        self, scope: str, limit: int, *, conn: AsyncConnection | None = None
    ) -> list[Diary]:
        d = diaries.c
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(diaries).where(d.scope == scope).order_by(d.day.desc()).limit(limit)
            )
            return [
                Diary(r.scope, r.day, r.content, tuple(r.fragment_ids or ()), r.created_at)
                for r in rows
            ]

    async def timeline(
        self, scope: str, limit: int, *, conn: AsyncConnection | None = None
    ) -> list[TimelineEntry]:
        t = timeline.c
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(timeline)
                .where(t.scope == scope)
                .order_by(t.day.desc(), t.id.desc())
                .limit(limit)
            )
            return [TimelineEntry(r.scope, r.day, r.content) for r in rows]

    # --- archive and nightly grid ---------------------------------------------------------

    async def day_messages(
        self,
        scope: str,
        *,
        start: datetime,
        end: datetime,
        limit: int,
        conn: AsyncConnection | None = None,
    ) -> list[Experience]:
        """This chat's messages sent in [start, end), oldest first (at most `limit`)."""
        e = experiences.c
        query = (
            select(experiences)
            .where(e.scope == scope, e.sent_at >= start, e.sent_at < end)
            .order_by(e.sent_at, e.id)
            .limit(limit)
        )
        async with self.reading(conn) as conn:
            return [experience_of(r) for r in await conn.execute(query)]

    async def search_messages(
        self,
        scope: str,
        text: str,
        *,
        before: int | None,
        window: int,
        limit: int,
        conn: AsyncConnection | None = None,
    ) -> tuple[list[Experience], int | None]:
        """This chat's messages containing `text`, newest first, among the `window`
        newest messages older than `before` (None: from the newest); at most `limit`.
        Also returns where to go on searching (older messages remain), else None."""
        e = experiences.c
        older = [e.scope == scope] + ([e.id < before] if before is not None else [])
        async with self.reading(conn) as conn:
            floor = await conn.scalar(
                select(e.id).where(*older).order_by(e.id.desc()).offset(window - 1).limit(1)
            )
            inside = older + ([e.id >= floor] if floor is not None else [])
            rows = await conn.execute(
                select(experiences)
                .where(*inside, e.text.contains(text, autoescape=True))
                .order_by(e.id.desc())
                .limit(limit)
            )
            found = [experience_of(r) for r in rows]
            if len(found) == limit:
                return found, found[-1].id
            more = floor is not None and await conn.scalar(
                select(e.id).where(e.scope == scope, e.id < floor).limit(1)
            )
        return found, floor if more else None

    async def night_grid(
        self, scope: str, days: int, *, conn: AsyncConnection | None = None
    ) -> list[StepRow]:
        """Every step row of this chat's latest `days` nights, newest night first."""
        n = nightly_runs.c
        async with self.reading(conn) as conn:
            latest = (
                select(n.day).where(n.scope == scope).distinct().order_by(n.day.desc()).limit(days)
            )
            rows = await conn.execute(
                select(nightly_runs)
                .where(n.scope == scope, n.day.in_(latest.scalar_subquery()))
                .order_by(n.day.desc(), n.id)
            )
            return [step_of(r) for r in rows]


def _prefixed(kind: type[_T], prefix: str, m: Any) -> _T | None:
    """The `kind` (a dataclass) in the row's columns named `prefix` + field, or None
    when its outer join found nothing."""
    names = [f.name for f in fields(kind)]  # pyright: ignore[reportArgumentType]
    if m[prefix + names[0]] is None:
        return None
    return kind(**{n: m[prefix + n] for n in names})
